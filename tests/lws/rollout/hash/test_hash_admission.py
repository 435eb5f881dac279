"""Unit tests of the pure Hash-mode admission rules (lws/rollout/hash/admission.py)."""

from __future__ import annotations

from support.fixtures_hash import NS, key_of, leader, worker

from pulumi_lws.lws import labels as L
from pulumi_lws.lws.rollout.hash import admission as A

R1, R2 = "rev1", "rev2"


# ---- identity ---------------------------------------------------------------------------------


def test_derived_key_is_sha1_of_namespace_and_uid_and_stable():
    import hashlib

    pod = leader("web-x", R2, labelled=False)
    expected = hashlib.sha1(f"{NS}/uid-web-x".encode()).hexdigest()
    assert A.derive_group_key(NS, pod) == expected == A.derive_group_key(NS, dict(pod))
    assert A.group_key(NS, pod) == expected


def test_replacement_pod_gets_a_new_key():
    assert A.derive_group_key(NS, leader("web-x", R2)) != A.derive_group_key(NS, leader("web-y", R2))


def test_existing_label_wins_over_derivation():
    pod = leader("web-x", R2)
    pod["metadata"]["labels"][L.GROUP_KEY] = "f" * 40
    assert A.group_key(NS, pod) == "f" * 40


def test_group_index_of_unlabelled_leader_is_its_key_and_workers_use_label():
    p = leader("web-x", R2, labelled=False)
    assert A.group_index(NS, p) == A.derive_group_key(NS, p)
    assert A.group_index(NS, worker(leader("web-y", R1), 1)) == key_of(leader("web-y", R1))


# ---- tearing down (T) --------------------------------------------------------------------------


def test_post_termination_counts_groups_with_pods_but_no_live_leader():
    live = leader("web-a", R1, gated=False, ready=True)
    dying = leader("web-b", R1, gated=False, deleting=True)
    orphan_leader = leader("web-c", R1, gated=False)  # only its worker remains below
    pods = [live, worker(live, 1), dying, worker(dying, 1), worker(orphan_leader, 1)]
    assert A.tearing_down_groups(NS, pods, "PostTermination") == {key_of(dying), key_of(orphan_leader)}


def test_exhausted_group_counts_for_both_policies():
    ex = leader("web-a", R1, gated=False, exhausted=True)
    pods = [ex, leader("web-b", R1, deleting=True)]
    assert A.tearing_down_groups(NS, pods, "Immediate") == {key_of(ex)}
    assert A.tearing_down_groups(NS, pods, "PostTermination") == {key_of(ex), key_of(pods[1])}


# ---- per-revision cap --------------------------------------------------------------------------


def test_revision_cap_with_surge_and_rank():
    a = leader("web-a", R2, gated=False, created=1)
    b = leader("web-b", R2, created=2)
    c = leader("web-c", R2, created=3)
    leaders = [a, b, c]
    assert not A.revision_cap_defers(b, leaders, replicas=2)  # 1 admitted + rank 0 < 2
    assert A.revision_cap_defers(c, leaders, replicas=2)  # 1 admitted + rank 1 >= 2


def test_revision_cap_counts_exhausted_and_ignores_other_revisions_and_deleting():
    ex = leader("web-x", R2, gated=False, exhausted=True)
    old = leader("web-o", R1, gated=False)
    gone = leader("web-g", R2, gated=False, deleting=True)
    b = leader("web-b", R2, created=5)
    assert A.revision_cap_defers(b, [ex, old, gone, b], replicas=1)
    assert not A.revision_cap_defers(b, [old, gone, b], replicas=1)


def test_rank_ties_break_by_name():
    b = leader("web-b", R2, created=1)
    a = leader("web-a", R2, created=1)
    assert not A.revision_cap_defers(a, [b, a], replicas=1)
    assert A.revision_cap_defers(b, [b, a], replicas=1)


# ---- G - T rule ----------------------------------------------------------------------------------


def test_replacement_rank_puts_desired_revision_first_then_age():
    old = leader("web-o", R1, created=0)
    n1 = leader("web-n1", R2, created=5)
    n2 = leader("web-n2", R2, created=7)
    ls = [old, n2, n1]
    assert A.replacement_rank(n1, ls, R2) == (0, 3)
    assert A.replacement_rank(n2, ls, R2) == (1, 3)
    assert A.replacement_rank(old, ls, R2) == (2, 3)


def test_admission_oldest_g_minus_t_admitted():
    c = leader("web-c", R2, created=1)
    d = leader("web-d", R2, created=2)
    ls = [c, d]
    assert A.admission(c, ls, target=R2, replicas=2, tearing_down=1).admit
    dec = A.admission(d, ls, target=R2, replicas=2, tearing_down=1)
    assert not dec.admit and dec.reason == "GroupReplacementDeferred" and dec.waiting_for == 1
    assert "waits for 1 terminating group(s)" in dec.message
    assert A.admission(d, ls, target=R2, replicas=2, tearing_down=0).admit


def test_admission_defers_outdated_revision_first():
    o = leader("web-o", R1)
    dec = A.admission(o, [o], target=R2, replicas=2, tearing_down=0)
    assert not dec.admit and dec.reason == "OutdatedRevision"


def test_admission_cap_before_t_rule():
    a = leader("web-a", R2, gated=False)
    b = leader("web-b", R2, gated=False)
    c = leader("web-c", R2, created=3)
    dec = A.admission(c, [a, b, c], target=R2, replicas=2, tearing_down=0)
    assert not dec.admit and dec.reason == "RevisionCapReached"


def test_outdated_gated_leaders_count_in_g():
    """G counts every gated leader; outdated ones sort last, so they absorb T first."""
    old = leader("web-o", R1, created=0)
    n = leader("web-n", R2, created=1)
    assert A.admission(n, [old, n], target=R2, replicas=2, tearing_down=1).admit


def test_deletion_cost_constant():
    assert A.GATED_DELETION_COST == "-100"


# ---- terminal (Failed/Succeeded) leaders: not live, not admitted, never a candidate -------------


def test_terminal_phases_are_neither_live_nor_admitted_nor_awaiting_admission():
    for phase in ("Failed", "Succeeded"):
        dead = leader("web-f", R2, gated=False, phase=phase)
        assert A.is_terminal(dead) and not A.is_live_leader(dead) and not A.is_admitted(dead)
        assert not A.awaits_admission(leader("web-g", R2, phase=phase))
    running = leader("web-r", R2, gated=False, ready=True)
    assert not A.is_terminal(running) and A.is_live_leader(running) and A.is_admitted(running)
    assert A.awaits_admission(leader("web-n", R2))


def test_terminal_leader_group_tears_down_post_termination_only():
    dead = leader("web-f", R1, gated=False, phase="Failed")
    pods = [dead, worker(dead, 1), leader("web-a", R1, gated=False, ready=True)]
    assert A.tearing_down_groups(NS, pods, "PostTermination") == {key_of(dead)}
    assert A.tearing_down_groups(NS, [dead], "PostTermination") == {key_of(dead)}  # the leader object alone holds it
    assert A.tearing_down_groups(NS, pods, "Immediate") == set()


def test_terminal_leader_frees_its_revision_cap_slot():
    a = leader("web-a", R2, gated=False, created=1)
    dead = leader("web-f", R2, gated=False, created=2, phase="Failed")
    n = leader("web-n", R2, created=3)
    leaders = [a, dead, n]
    assert not A.revision_cap_defers(n, leaders, replicas=2)
    assert A.revision_cap_defers(n, [a, leader("web-b", R2, gated=False, created=2), n], replicas=2)
    assert A.admission(n, leaders, target=R2, replicas=2, tearing_down=0).admit


def test_terminal_gated_leader_takes_no_rank():
    dead = leader("web-f", R2, created=1, phase="Failed")
    n = leader("web-n", R2, created=2)
    assert A.replacement_rank(n, [dead, n], R2) == (0, 1)
    assert A.admission(n, [dead, n], target=R2, replicas=1, tearing_down=0).admit
