"""Hash identity (leader Deployment): group admission, blockers, predictions."""
