"""The driver side of the simulator: scenarios, the reconcile loop and its engines (pure, Pulumi mock engine), the converged-fleet expansion, traces, narration and the SVG plot."""
