// What a call can fail with. A problem document (RFC 9457) becomes an
// instance of the class of its `type`, so callers can `instanceof` or switch
// on `code`; anything else that failed has a class of its own.

/** The problem codes of docs/ERRORS.md. */
export const PROBLEM_CODES = [
  "INVALID_ARGUMENT",
  "IDEMPOTENCY_KEY_INVALID",
  "IDEMPOTENCY_KEY_MISSING",
  "UNAUTHENTICATED",
  "PERMISSION_DENIED",
  "USER_IDENTITY_REQUIRED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "QUEUE_ALREADY_EXISTS",
  "TASK_ALREADY_EXISTS",
  "JOB_ALREADY_EXISTS",
  "PRINCIPAL_ALREADY_EXISTS",
  "ORGANIZATION_ALREADY_EXISTS",
  "IDEMPOTENCY_KEY_IN_PROGRESS",
  "STALE_VERSION",
  "FAILED_PRECONDITION",
  "WORK_ALREADY_CLAIMED",
  "LEASE_LOST",
  "IDEMPOTENT_RESOURCE_GONE",
  "PAYLOAD_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "IDEMPOTENCY_KEY_MISMATCH",
  "RESOURCE_EXHAUSTED",
  "INTERNAL",
  "UNAVAILABLE",
] as const;

export type ProblemCode = (typeof PROBLEM_CODES)[number];

/** One entry of `extensions.errors`. */
export interface FieldError {
  field: string;
  message: string;
}

/** A problem document as received. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail?: string | null;
  request_id?: string | null;
  instance?: string | null;
  extensions?: Record<string, unknown> | null;
}

/** Base of every error this library throws. */
export class IdemError extends Error {
  override name = "IdemError";
}

/** The server answered with a problem document. */
export class ProblemError extends IdemError {
  override name = "ProblemError";
  /** The problem's `type`: one of {@link PROBLEM_CODES}, or a newer code. */
  readonly code: ProblemCode | (string & {});
  readonly status: number;
  readonly title: string;
  readonly detail: string | undefined;
  /** The problem's `request_id`, else the answer's `Idem-Request-Id`. */
  readonly requestId: string | undefined;
  readonly instance: string | undefined;
  readonly extensions: Record<string, unknown>;
  /** `extensions.errors`: the fields a 400 names. */
  readonly fieldErrors: FieldError[];
  /** The answer's `Retry-After`, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The document exactly as received. */
  readonly problem: ProblemDocument;

  constructor(problem: ProblemDocument, options: { requestId?: string; retryAfterMs?: number } = {}) {
    const requestId = problem.request_id ?? options.requestId;
    const detail = problem.detail ?? undefined;
    super(
      `${problem.type} (${problem.status})` +
        (detail ? `: ${detail}` : problem.title ? `: ${problem.title}` : "") +
        (requestId ? ` [request ${requestId}]` : ""),
    );
    this.problem = problem;
    this.code = problem.type;
    this.status = problem.status;
    this.title = problem.title;
    this.detail = detail;
    this.requestId = requestId;
    this.instance = problem.instance ?? undefined;
    this.extensions = problem.extensions ?? {};
    const errors = this.extensions["errors"];
    this.fieldErrors = Array.isArray(errors) ? (errors as FieldError[]) : [];
    this.retryAfterMs = options.retryAfterMs;
  }
}

// One class per code: `err instanceof TaskAlreadyExistsError` reads better
// than comparing strings, and narrows `extensions` for the codes that define
// one.
export class InvalidArgumentError extends ProblemError { override name = "InvalidArgumentError"; }
export class IdempotencyKeyInvalidError extends ProblemError { override name = "IdempotencyKeyInvalidError"; }
export class IdempotencyKeyMissingError extends ProblemError { override name = "IdempotencyKeyMissingError"; }
export class UnauthenticatedError extends ProblemError { override name = "UnauthenticatedError"; }
export class PermissionDeniedError extends ProblemError { override name = "PermissionDeniedError"; }
export class UserIdentityRequiredError extends ProblemError { override name = "UserIdentityRequiredError"; }
export class NotFoundError extends ProblemError { override name = "NotFoundError"; }
export class MethodNotAllowedError extends ProblemError { override name = "MethodNotAllowedError"; }
export class QueueAlreadyExistsError extends ProblemError { override name = "QueueAlreadyExistsError"; }
export class TaskAlreadyExistsError extends ProblemError {
  override name = "TaskAlreadyExistsError";
  /** `extensions.task`: the task holding the ID. */
  get task(): { id: string; state: string; created_at?: string; finished_at?: string | null } | undefined {
    return this.extensions["task"] as never;
  }
}
export class JobAlreadyExistsError extends ProblemError { override name = "JobAlreadyExistsError"; }
export class PrincipalAlreadyExistsError extends ProblemError { override name = "PrincipalAlreadyExistsError"; }
export class OrganizationAlreadyExistsError extends ProblemError { override name = "OrganizationAlreadyExistsError"; }
export class IdempotencyKeyInProgressError extends ProblemError { override name = "IdempotencyKeyInProgressError"; }
export class StaleVersionError extends ProblemError { override name = "StaleVersionError"; }
export class FailedPreconditionError extends ProblemError { override name = "FailedPreconditionError"; }
export class WorkAlreadyClaimedError extends ProblemError {
  override name = "WorkAlreadyClaimedError";
  /** `extensions.claim`: who holds the lease, until when. */
  get claim(): { claimant: string; lease_expires_at: string } | undefined {
    return this.extensions["claim"] as never;
  }
}
export class LeaseLostError extends ProblemError { override name = "LeaseLostError"; }
export class IdempotentResourceGoneError extends ProblemError {
  override name = "IdempotentResourceGoneError";
  /** `extensions.idempotency`: the resource the key had made. */
  get resource(): { resource_kind: string; resource_id: string } | undefined {
    return this.extensions["idempotency"] as never;
  }
}
export class PayloadTooLargeError extends ProblemError { override name = "PayloadTooLargeError"; }
export class UnsupportedMediaTypeError extends ProblemError { override name = "UnsupportedMediaTypeError"; }
export class IdempotencyKeyMismatchError extends ProblemError {
  override name = "IdempotencyKeyMismatchError";
  /** `extensions.idempotency.differs`: what differs from the first request. */
  get differs(): string[] {
    const idem = this.extensions["idempotency"] as { differs?: string[] } | undefined;
    return idem?.differs ?? [];
  }
}
export class ResourceExhaustedError extends ProblemError {
  override name = "ResourceExhaustedError";
  /** `extensions.limit`: the quota reached. */
  get limit(): string | undefined {
    return this.extensions["limit"] as string | undefined;
  }
}
export class InternalError extends ProblemError { override name = "InternalError"; }
export class UnavailableError extends ProblemError { override name = "UnavailableError"; }

const CLASSES: Record<ProblemCode, new (p: ProblemDocument, o?: { requestId?: string; retryAfterMs?: number }) => ProblemError> = {
  INVALID_ARGUMENT: InvalidArgumentError,
  IDEMPOTENCY_KEY_INVALID: IdempotencyKeyInvalidError,
  IDEMPOTENCY_KEY_MISSING: IdempotencyKeyMissingError,
  UNAUTHENTICATED: UnauthenticatedError,
  PERMISSION_DENIED: PermissionDeniedError,
  USER_IDENTITY_REQUIRED: UserIdentityRequiredError,
  NOT_FOUND: NotFoundError,
  METHOD_NOT_ALLOWED: MethodNotAllowedError,
  QUEUE_ALREADY_EXISTS: QueueAlreadyExistsError,
  TASK_ALREADY_EXISTS: TaskAlreadyExistsError,
  JOB_ALREADY_EXISTS: JobAlreadyExistsError,
  PRINCIPAL_ALREADY_EXISTS: PrincipalAlreadyExistsError,
  ORGANIZATION_ALREADY_EXISTS: OrganizationAlreadyExistsError,
  IDEMPOTENCY_KEY_IN_PROGRESS: IdempotencyKeyInProgressError,
  STALE_VERSION: StaleVersionError,
  FAILED_PRECONDITION: FailedPreconditionError,
  WORK_ALREADY_CLAIMED: WorkAlreadyClaimedError,
  LEASE_LOST: LeaseLostError,
  IDEMPOTENT_RESOURCE_GONE: IdempotentResourceGoneError,
  PAYLOAD_TOO_LARGE: PayloadTooLargeError,
  UNSUPPORTED_MEDIA_TYPE: UnsupportedMediaTypeError,
  IDEMPOTENCY_KEY_MISMATCH: IdempotencyKeyMismatchError,
  RESOURCE_EXHAUSTED: ResourceExhaustedError,
  INTERNAL: InternalError,
  UNAVAILABLE: UnavailableError,
};

/** The error for a problem document: the class of its code, else {@link ProblemError}. */
export function problemError(problem: ProblemDocument, options: { requestId?: string; retryAfterMs?: number } = {}): ProblemError {
  const cls = (CLASSES as Record<string, (typeof CLASSES)[ProblemCode]>)[problem.type] ?? ProblemError;
  return new cls(problem, options);
}

/** Whether `error` is a problem with this code (narrowing to its class). */
export function isProblem<C extends ProblemCode>(error: unknown, code: C): error is InstanceType<(typeof CLASSES)[C]> {
  return error instanceof ProblemError && error.code === code;
}

/** Whether a parsed JSON value looks like a problem document. */
export function looksLikeProblem(value: unknown): value is ProblemDocument {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v["type"] === "string" && typeof v["status"] === "number";
}

/** The server answered with an error status but no problem document (a proxy in between, say). */
export class UnexpectedStatusError extends IdemError {
  override name = "UnexpectedStatusError";
  constructor(
    readonly status: number,
    readonly requestId: string | undefined,
    readonly body: string,
  ) {
    super(`unexpected answer ${status}${requestId ? ` [request ${requestId}]` : ""}: ${body}`);
  }
}

/**
 * No answer on any attempt the retry policy allowed. A write may still have
 * taken effect: calling again with the same idempotency key is safe.
 */
export class TransportError extends IdemError {
  override name = "TransportError";
  constructor(
    message: string,
    readonly attempts: number,
    readonly idempotencyKey: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A success answer whose body is not JSON. */
export class DecodeError extends IdemError {
  override name = "DecodeError";
  constructor(
    readonly status: number,
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`decoding the ${status} answer${requestId ? ` [request ${requestId}]` : ""}`, options);
  }
}

/** The request could not be built from the arguments; nothing was sent. */
export class InvalidRequestError extends IdemError {
  override name = "InvalidRequestError";
}
