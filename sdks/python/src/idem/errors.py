"""What a call can fail with.

A problem document (RFC 9457) from the server becomes an exception of the
class its ``type`` names (``TASK_ALREADY_EXISTS`` → ``TaskAlreadyExistsError``),
all subclasses of :class:`ProblemError`, so that callers catch what they
handle and let the rest through. A code this version does not know yet still
arrives as a plain :class:`ProblemError` with every field.
"""

from __future__ import annotations

from typing import Any, Mapping


class IdemError(Exception):
    """Base of every error this library raises."""


class TransportError(IdemError):
    """No answer came back (connection refused or lost, timeout), after
    every attempt the retry policy allowed."""

    def __init__(self, message: str, attempts: int, idempotency_key: str | None = None):
        super().__init__(f"{message} (after {attempts} attempt{'s' if attempts != 1 else ''})")
        self.attempts = attempts
        # Send it again with this key to learn what became of the call.
        self.idempotency_key = idempotency_key


class UnexpectedStatusError(IdemError):
    """An error status without a problem document (a proxy in between)."""

    def __init__(self, status: int, body: str, request_id: str | None):
        suffix = f" [request {request_id}]" if request_id else ""
        super().__init__(f"unexpected answer {status}{suffix}: {body[:200]}")
        self.status = status
        self.body = body
        self.request_id = request_id


class DecodeError(IdemError):
    """A success answer whose body is not the JSON expected."""


class ProblemError(IdemError):
    """The server answered with a problem document."""

    code: str = ""

    def __init__(self, document: Mapping[str, Any], *, retry_after: float | None = None, request_id: str | None = None):
        self.document = dict(document)
        self.code = str(document.get("type", self.code or ""))
        self.title = str(document.get("title", ""))
        self.status = int(document.get("status", 0) or 0)
        self.detail = document.get("detail")
        self.instance = document.get("instance")
        self.request_id = document.get("request_id") or request_id
        self.extensions: dict[str, Any] = dict(document.get("extensions") or {})
        self.retry_after = retry_after
        text = f"{self.code} ({self.status})"
        if self.detail:
            text += f": {self.detail}"
        elif self.title:
            text += f": {self.title}"
        if self.request_id:
            text += f" [request {self.request_id}]"
        super().__init__(text)

    @property
    def errors(self) -> list[dict[str, Any]]:
        """Field errors of a 400: ``[{"field": "target.url", "message": …}]``."""
        return list(self.extensions.get("errors") or [])


# One class per code of docs/ERRORS.md, plus the guard's and the proxy's own
# (REQUEST_TIMEOUT, UPSTREAM_UNAVAILABLE) and RATE_LIMITED, kept for servers
# that answer it. Tests hold this list to the codes the OpenAPI document
# names, so a code the server gains fails them until it is added here.


class InvalidArgumentError(ProblemError):
    code = "INVALID_ARGUMENT"


class IdempotencyKeyInvalidError(ProblemError):
    code = "IDEMPOTENCY_KEY_INVALID"


class IdempotencyKeyMissingError(ProblemError):
    code = "IDEMPOTENCY_KEY_MISSING"


class UnauthenticatedError(ProblemError):
    code = "UNAUTHENTICATED"


class PermissionDeniedError(ProblemError):
    code = "PERMISSION_DENIED"


class UserIdentityRequiredError(ProblemError):
    code = "USER_IDENTITY_REQUIRED"


class NotFoundError(ProblemError):
    code = "NOT_FOUND"


class MethodNotAllowedError(ProblemError):
    code = "METHOD_NOT_ALLOWED"


class RequestTimeoutError(ProblemError):
    code = "REQUEST_TIMEOUT"


class QueueAlreadyExistsError(ProblemError):
    code = "QUEUE_ALREADY_EXISTS"


class TaskAlreadyExistsError(ProblemError):
    code = "TASK_ALREADY_EXISTS"


class JobAlreadyExistsError(ProblemError):
    code = "JOB_ALREADY_EXISTS"


class PrincipalAlreadyExistsError(ProblemError):
    code = "PRINCIPAL_ALREADY_EXISTS"


class OrganizationAlreadyExistsError(ProblemError):
    code = "ORGANIZATION_ALREADY_EXISTS"


class IdempotencyKeyInProgressError(ProblemError):
    code = "IDEMPOTENCY_KEY_IN_PROGRESS"


class StaleVersionError(ProblemError):
    code = "STALE_VERSION"


class WorkAlreadyClaimedError(ProblemError):
    code = "WORK_ALREADY_CLAIMED"


class LeaseLostError(ProblemError):
    code = "LEASE_LOST"


class FailedPreconditionError(ProblemError):
    code = "FAILED_PRECONDITION"


class IdempotentResourceGoneError(ProblemError):
    code = "IDEMPOTENT_RESOURCE_GONE"


class PayloadTooLargeError(ProblemError):
    code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaTypeError(ProblemError):
    code = "UNSUPPORTED_MEDIA_TYPE"


class IdempotencyKeyMismatchError(ProblemError):
    code = "IDEMPOTENCY_KEY_MISMATCH"


class RateLimitedError(ProblemError):
    code = "RATE_LIMITED"


class ResourceExhaustedError(ProblemError):
    code = "RESOURCE_EXHAUSTED"


class InternalError(ProblemError):
    code = "INTERNAL"


class UnavailableError(ProblemError):
    code = "UNAVAILABLE"


class UpstreamUnavailableError(ProblemError):
    code = "UPSTREAM_UNAVAILABLE"


PROBLEM_CLASSES: dict[str, type[ProblemError]] = {cls.code: cls for cls in ProblemError.__subclasses__()}


def problem_error(document: Mapping[str, Any], *, retry_after: float | None = None, request_id: str | None = None) -> ProblemError:
    """The exception for a problem document, typed by its code."""
    cls = PROBLEM_CLASSES.get(str(document.get("type", "")), ProblemError)
    return cls(document, retry_after=retry_after, request_id=request_id)
