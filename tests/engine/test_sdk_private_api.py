"""The Pulumi SDK internals pulumi-lws relies on, and the supported SDK range.

There is no public way to wait for an Output synchronously: a component must plan (and register
its children) inside ``__init__``, so components/inputs.py waits with the SDK's own
``pulumi.runtime.sync_await._sync_await`` — the function the SDK's synchronous invokes use, which
pumps the running event loop re-entrantly. The gRPC tests in this folder prove it under both real
paths (the provider's ``Construct`` inside the grpc.aio server's running loop, the language host's
``run_until_complete``); this module fails loudly, naming what to check, when an SDK upgrade
changes any of these internals or leaves the range pinned in pyproject.toml.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from importlib import metadata

import pytest
from conftest import REPO_ROOT
from packaging.specifiers import SpecifierSet
from packaging.version import Version

WHERE = (
    "pulumi_lws/components/inputs.py (resolve_inputs) and pulumi_lws/provider/schema.py (construct_error) "
    "use this SDK internal; re-check them against the new SDK, then move the pin in pyproject.toml"
)


def _pinned_range() -> SpecifierSet:
    text = (REPO_ROOT / "pyproject.toml").read_text()
    match = re.search(r'"pulumi([<>=!~][^"]*)"', text)
    assert match, "pyproject.toml pins no pulumi range"
    return SpecifierSet(match.group(1))


def test_the_installed_sdk_is_in_the_pinned_range():
    installed = Version(metadata.version("pulumi"))
    pinned = _pinned_range()
    assert installed in pinned, f"pulumi {installed} is outside the supported range {pinned}: {WHERE}"
    assert pinned.contains("3.272.0"), "the range must include the version the gRPC tests ran with"
    assert not pinned.contains("4.0.0"), "a major SDK release is never assumed compatible"


def test_sync_await_waits_outside_and_inside_a_running_loop():
    from pulumi.runtime import sync_await

    assert hasattr(sync_await, "_sync_await"), f"pulumi.runtime.sync_await._sync_await is gone: {WHERE}"
    params = list(inspect.signature(sync_await._sync_await).parameters)
    assert params == ["awaitable"], f"_sync_await's signature changed to {params}: {WHERE}"

    async def value(v):
        await asyncio.sleep(0)
        return v

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        assert sync_await._sync_await(value(1)) == 1  # no loop running: run_until_complete

        async def inside():  # a running loop (Construct in grpc.aio, run_in_stack): re-entrant pumping
            return sync_await._sync_await(value(2)) + await value(3)

        assert loop.run_until_complete(inside()) == 5
    finally:
        loop.close()
        asyncio.set_event_loop(asyncio.new_event_loop())


def test_output_internals_the_inputs_read():
    import pulumi
    from pulumi.output import Unknown

    for name in ("resources", "is_known", "is_secret", "future"):
        assert callable(getattr(pulumi.Output, name, None)), f"Output.{name} is gone: {WHERE}"
    assert "with_unknowns" in inspect.signature(pulumi.Output.future).parameters, (
        f"Output.future(with_unknowns=): {WHERE}"
    )
    assert inspect.isclass(Unknown), f"pulumi.output.Unknown is gone: {WHERE}"
    params = list(inspect.signature(pulumi.Output.__init__).parameters)
    assert params[:5] == ["self", "resources", "future", "is_known", "is_secret"], f"Output(...) changed: {WHERE}"


def test_provider_server_internals_construct_error_uses():
    from pulumi.errors import InputPropertiesError
    from pulumi.provider.server import ComponentInitError

    assert "inner" in inspect.signature(ComponentInitError.__init__).parameters, f"ComponentInitError(inner): {WHERE}"
    error = InputPropertiesError("m", [{"property_path": "p", "reason": "r"}])
    assert error.message == "m" and error.errors == [{"property_path": "p", "reason": "r"}], WHERE


@pytest.mark.parametrize("kind", ["secret", "unknown"])
def test_construct_inputs_deserialize_as_documented(kind):
    """docs/component.md: a plain secret nested in an input is lifted to the whole input; an
    unknown sentinel becomes ``pulumi.output.Unknown`` (keep_unknowns)."""
    from google.protobuf import struct_pb2
    from grpc_engine import SECRET_SIG, SIG_KEY, UNKNOWN
    from pulumi.output import Unknown
    from pulumi.runtime import rpc

    leaf = {SIG_KEY: SECRET_SIG, "value": "token"} if kind == "secret" else UNKNOWN
    struct = struct_pb2.Struct()
    struct.update({"workerTemplate": {"spec": {"env": [{"name": "a", "value": leaf}]}}})
    value = rpc.deserialize_properties(struct, keep_unknowns=True)["workerTemplate"]
    if kind == "secret":
        assert rpc.is_rpc_secret(value), (
            f"nested plain secrets are no longer lifted (update docs/component.md): {WHERE}"
        )
    else:
        assert isinstance(value["spec"]["env"][0]["value"], Unknown), WHERE
