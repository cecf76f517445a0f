"""The stack suite: does a whole provider stack (the HTTP body in, the finished turn out) get each recording right?

A *stack* is everything between the provider's bytes and the calls an agent would run: an SDK's
own stream accumulator, a framework's provider layer, or a process in another language behind the
bridge. It is called as ``stack(api, pieces, options)`` with the response body of a recording in
byte pieces and returns its final result (``conformance.wire.final`` reads it). Each recording is
checked whole and cut at arbitrary byte offsets, against the recording's independent expectation.

* ``checks``: what the result must say (the same outcome rules as ``conformance.wire.replay``);
* ``runner``: ``run_stack_conformance`` over every recording with an expectation;
* ``failures``: the recordings behind each finding, saved as bodies (``run --save-failures``) and read
  back (``repro``);
* ``factory``: what ``run --stack MODULE:FACTORY`` accepts (a stack or a zero-argument factory of one,
  its ``capabilities`` attribute), read by ``as_stack`` (docs/stacks.md).
"""

from conformance.stack.checks import STACK_CHECKS, StackCapabilities, StackContext
from conformance.stack.factory import StackFactoryError, StackTarget, as_stack, close_stack, declared_capabilities
from conformance.stack.failures import (
    FailingRecording,
    SavedFailure,
    StackFinding,
    load_saved_failure,
    save_failures,
)
from conformance.stack.runner import Stack, run_stack_conformance, sdk_stack

__all__ = [
    "STACK_CHECKS",
    "FailingRecording",
    "SavedFailure",
    "Stack",
    "StackCapabilities",
    "StackContext",
    "StackFactoryError",
    "StackFinding",
    "StackTarget",
    "as_stack",
    "close_stack",
    "declared_capabilities",
    "load_saved_failure",
    "run_stack_conformance",
    "save_failures",
    "sdk_stack",
]
