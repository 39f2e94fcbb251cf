// Names for the OpenAPI document's schemas, so callers need not spell
// `components["schemas"][…]`.

import type { components, operations, paths } from "./generated/openapi.js";

export type { components, operations, paths };
export type Schemas = components["schemas"];

export type Queue = Schemas["QueueView"];
export type QueueStats = Schemas["QueueStatsView"];
export type NewQueue = Schemas["CreateQueue"];
export type QueuePatch = Schemas["QueueConfigPatch"];
export type Group = Schemas["GroupView"];
export type Purged = Schemas["PurgeView"];
export type Task = Schemas["TaskView"];
export type TaskState = Schemas["TaskState"];
export type NewTask = Schemas["CreateTask"];
export type TargetSpec = Schemas["TargetSpec"];
export type PayloadSpec = Schemas["PayloadSpec"];
export type Attempt = Schemas["Attempt"];
export type AttemptResponse = Schemas["AttemptResponse"];
export type Lease = Schemas["Lease"];
export type BatchResults = Schemas["TaskBatchResults"];
export type BatchResult = BatchResults["results"][number];
export type Redriven = Schemas["RedriveView"];
export type RedriveFilter = Schemas["RedriveTasks"];
export type ClaimRequest = Schemas["ClaimTasks"];
export type ClaimedTasks = Schemas["ClaimedTasks"];
export type EndTask = Schemas["EndTask"];
export type EndedTasks = Schemas["EndedTasks"];
export type EndResult = EndedTasks["results"][number];
export type Job = Schemas["JobView"];
export type NewJob = Schemas["CreateJob"];
export type JobPatch = Schemas["UpdateJob"];
export type Run = Schemas["RunView"];
export type SchedulePreviewRequest = Schemas["PreviewRequest"];
export type SchedulePreview = Schemas["PreviewView"];
export type Principal = Schemas["PrincipalView"];
export type NewPrincipal = Schemas["CreatePrincipal"];
export type PrincipalPatch = Schemas["UpdatePrincipal"];
export type ApiKey = Schemas["ApiKeyView"];
export type NewApiKey = Schemas["NewApiKeyView"];
export type Organization = Schemas["OrganizationView"];
export type SigningSecret = Schemas["SigningSecretView"];
export type SigningSecrets = Schemas["SigningSecretsView"];
export type Webhook = Schemas["WebhookView"];
export type NewWebhook = Schemas["CreateWebhook"];
export type IdempotencyKeyRecord = Schemas["IdempotencyKeyView"];
export type OpenIdConfiguration = Schemas["OpenIdConfiguration"];
export type Jwks = Schemas["Jwks"];
export type Problem = Schemas["Problem"];

/** One page of a list. */
export interface Page<T> {
  items: T[];
  next_page_token: string | null;
}

/** Paging of every list: `limit` (1–1000, default 50) and the previous page's token. */
export interface PageOptions {
  limit?: number;
  page_token?: string;
}

export type TaskFilter = NonNullable<operations["listTasks"]["parameters"]["query"]>;
export type GroupFilter = NonNullable<operations["listQueueGroups"]["parameters"]["query"]>;
