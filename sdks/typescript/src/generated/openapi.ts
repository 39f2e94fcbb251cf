// Generated from the OpenAPI document Idem serves at GET /openapi.json.
// Do not edit: run `npm run generate` (it starts the server binary named by
// IDEM_BIN, or takes --url) and commit the result.
/* eslint-disable */

export interface paths {
    "/.well-known/jwks.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every organization's public keys that signed ID tokens which may not have expired */
        get: operations["getJwks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/openid-configuration": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The OpenID Provider configuration: the issuer of the ID tokens sent to targets and where its keys are */
        get: operations["getOpenIdConfiguration"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process is up */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics (with --metrics-token, send it as a bearer token) */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["openapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The store is reachable */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/idempotency-keys/{key}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Inspect the caller's own Idempotency-Key record */
        get: operations["getIdempotencyKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List cron jobs */
        get: operations["listJobs"];
        put?: never;
        /** Create a cron job */
        post: operations["createJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{job}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a cron job */
        get: operations["getJob"];
        put?: never;
        post?: never;
        /** Delete a cron job and its runs */
        delete: operations["deleteJob"];
        options?: never;
        head?: never;
        /** Update a cron job (expected_updated_at guards against lost updates) */
        patch: operations["updateJob"];
        trace?: never;
    };
    "/v1/jobs/{job}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop creating runs */
        post: operations["pauseJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{job}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume creating runs, from now on */
        post: operations["resumeJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{job}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a manual run now */
        post: operations["runJob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{job}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a job's runs, newest first */
        get: operations["listJobRuns"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{job}/runs/{run_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one run of a job */
        get: operations["getJobRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{job}/runs/{run_id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a run's attempts, oldest first */
        get: operations["listJobRunAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/organizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create an organization with its first admin key */
        post: operations["createOrganization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/principals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List principals */
        get: operations["listPrincipals"];
        put?: never;
        /** Create a principal (an admin only by a person) */
        post: operations["createPrincipal"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/principals/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Change a principal's role */
        patch: operations["updatePrincipal"];
        trace?: never;
    };
    "/v1/principals/{name}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a principal's API keys */
        get: operations["listApiKeys"];
        put?: never;
        /** Create an API key (shown once; a key for an admin only by a person) */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/principals/{name}/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an API key (never the key itself) */
        get: operations["getApiKey"];
        put?: never;
        post?: never;
        /** Revoke an API key */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List queues */
        get: operations["listQueues"];
        put?: never;
        /** Create a queue */
        post: operations["createQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a queue */
        get: operations["getQueue"];
        put?: never;
        post?: never;
        /** Delete a queue and its tasks */
        delete: operations["deleteQueue"];
        options?: never;
        head?: never;
        /** Update a queue's configuration */
        patch: operations["updateQueue"];
        trace?: never;
    };
    "/v1/queues/{queue}/groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a queue's groups with live tasks, by name */
        get: operations["listQueueGroups"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop dispatching a queue */
        post: operations["pauseQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/purge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel every task not running */
        post: operations["purgeQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume dispatching a queue */
        post: operations["resumeQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List tasks, filtered by state, ID prefix and creation time */
        get: operations["listTasks"];
        put?: never;
        /** Create a task (JSON or multipart/form-data) */
        post: operations["createTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks:batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create up to 1000 tasks with one commit (JSON or NDJSON), answered item by item */
        post: operations["createTasks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks:claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: lease up to max_tasks due tasks in schedule order, waiting up to wait_ms for one (writer; Idempotency-Key is ignored) */
        post: operations["claimTasks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks:end": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: complete (result) or fail (error) up to 100 leased attempts in one call, answered item by item: 200 with the task, or the problem its own complete or fail would answer (writer; person-only on a person_only queue) */
        post: operations["endTasks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks:redrive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run a queue's failed (or cancelled) tasks again, in one transaction */
        post: operations["redriveTasks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a task */
        get: operations["getTask"];
        put?: never;
        post?: never;
        /** Cancel a task (a running attempt is aborted) */
        delete: operations["cancelTask"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/assign": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: lease a task nobody holds to a principal; 409 WORK_ALREADY_CLAIMED if leased (admin) */
        post: operations["assignTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a task's attempts */
        get: operations["listTaskAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: lease one task; 409 WORK_ALREADY_CLAIMED if it is leased, to the caller too (writer) */
        post: operations["claimTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: end the leased task succeeded, with an optional result; the holder's repeated complete with the same result answers 200, Idempotent-Replayed (writer holding the lease, or admin; person-only on a person_only queue: 403 USER_IDENTITY_REQUIRED to a service key) */
        post: operations["completeTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/fail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: fail the leased attempt; the retry policy queues the task again or fails it; the holder's repeated fail with the same error answers 200, Idempotent-Replayed (writer holding the lease, or admin; person-only on a person_only queue: 403 USER_IDENTITY_REQUIRED to a service key) */
        post: operations["failTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/heartbeat": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: extend the lease attempt_id names; 409 LEASE_LOST if it is not the current one or not the caller's (writer holding the lease, or admin) */
        post: operations["heartbeatTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/reassign": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: hand the lease, same attempt_id and a fresh term, to another principal (its holder or an admin) */
        post: operations["reassignTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/redrive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run a failed or cancelled task again, with the same ID and run key and a fresh retry budget */
        post: operations["redriveTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pull queues: give the leased task back, due now; the attempt does not count (writer holding the lease, or admin) */
        post: operations["releaseTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/queues/{queue}/tasks/{task_id}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Dispatch a scheduled or backing-off task now */
        post: operations["runTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/schedules/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The next instants a schedule fires at */
        post: operations["previewSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/signing-secrets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List signing secrets, newest first */
        get: operations["listSigningSecrets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/signing-secrets/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a signing secret */
        get: operations["getSigningSecret"];
        put?: never;
        post?: never;
        /** Delete a signing secret */
        delete: operations["deleteSigningSecret"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/signing-secrets/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Add a signing secret */
        post: operations["rotateSigningSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the organization's event webhooks */
        get: operations["listWebhooks"];
        put?: never;
        /** Add an event webhook (task.failed, job.run_failed) */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an event webhook */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete an event webhook */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        ApiKeyList: {
            items: components["schemas"]["ApiKeyView"][];
            next_page_token: string | null;
        };
        /** @description An API key as listed: never its secret. */
        ApiKeyView: {
            /**
             * Format: date-time
             * @description When it was created.
             */
            created_at: string;
            /** @description The key's ID (`key_…`), used to revoke it. */
            id: string;
            /**
             * Format: date-time
             * @description When it last authenticated a request.
             */
            last_used_at?: string | null;
            /** @description The principal it acts as. */
            principal: string;
        };
        /** @description `POST …/tasks/{task_id}/assign`. */
        AssignTask: {
            /**
             * Format: int32
             * @description 1–3600 (default 60).
             */
            lease_s?: number | null;
            /** @description The principal the lease goes to. */
            principal: string;
        };
        /** @description One delivery attempt as recorded. */
        Attempt: {
            /**
             * Format: int32
             * @description 1-based.
             */
            attempt: number;
            /** Format: int64 */
            duration_ms?: number | null;
            error?: string | null;
            /** Format: date-time */
            finished_at?: string | null;
            response?: components["schemas"]["AttemptResponse"] | null;
            /** Format: date-time */
            started_at: string;
            /** Format: int32 */
            status_code?: number | null;
        };
        AttemptList: {
            items: components["schemas"]["Attempt"][];
            next_page_token: string | null;
        };
        /**
         * @description The start of a target's non-2xx answer, kept so that the attempt says
         *     why the target refused, not only that it did.
         */
        AttemptResponse: {
            /**
             * @description The first 1 KiB of the answer's body as text; bytes that are not
             *     UTF-8 read as U+FFFD.
             */
            body: string;
            /** @description The answer's `Content-Type`, as sent (at most 200 characters). */
            content_type?: string | null;
            /** @description The body went on past what `body` holds. */
            truncated: boolean;
        };
        /** @description Where a completion event goes: a target without a body (the event is the body), sent with POST (the default), PUT or PATCH. */
        CallbackSpec: {
            headers?: {
                [key: string]: string;
            };
            method?: string | null;
            oidc?: components["schemas"]["OidcSpec"] | null;
            /**
             * @description Headers whose values are never shown again once created (beside
             *     `Authorization`, `Cookie` and `Proxy-Authorization`, which never
             *     are); deliveries still send them.
             */
            secret_headers?: string[];
            /** Format: uri */
            url: string;
        };
        /**
         * @description What a job does with the instants it missed while no scheduler ran.
         * @enum {string}
         */
        CatchUp: "none" | "latest" | "all";
        /**
         * @description The answer to a claim: the tasks taken, each with its lease, in
         *     schedule order; empty when none was due within the wait.
         */
        ClaimedTasks: {
            tasks: components["schemas"]["TaskView"][];
        };
        /** @description `POST …/tasks/{task_id}/claim`. */
        ClaimTask: {
            /**
             * Format: int32
             * @description 1–3600 (default 60).
             */
            lease_s?: number | null;
        };
        /** @description `POST /v1/queues/{queue}/tasks:claim`. */
        ClaimTasks: {
            /**
             * Format: int32
             * @description 1–3600 (default 60): the lease's length.
             */
            lease_s?: number | null;
            /**
             * Format: int32
             * @description 1–100 (default 1).
             */
            max_tasks?: number | null;
            /** @description Only tasks with this tag. */
            tag?: string | null;
            /**
             * Format: int64
             * @description 0–30000: how long to wait for a due task when none is (default 0).
             */
            wait_ms?: number | null;
        };
        /** @description `POST …/tasks/{task_id}/complete`. */
        CompleteTask: {
            attempt_id: string;
            /** @description Any JSON value up to 64 KiB, shown on the task afterwards. */
            result?: unknown;
        };
        /** @description `POST /v1/jobs`. */
        CreateJob: {
            /** Format: int32 */
            attempt_deadline_s?: number | null;
            catch_up?: components["schemas"]["CatchUp"] | null;
            header_style?: components["schemas"]["JobHeaderStyle"] | null;
            name: string;
            paused?: boolean | null;
            retry_config?: components["schemas"]["JobRetryConfigPatch"] | null;
            schedule: string;
            target: components["schemas"]["TargetSpec"];
            /** @enum {string|null} */
            time_zone?: "Africa/Abidjan" | "Africa/Accra" | "Africa/Addis_Ababa" | "Africa/Algiers" | "Africa/Asmara" | "Africa/Asmera" | "Africa/Bamako" | "Africa/Bangui" | "Africa/Banjul" | "Africa/Bissau" | "Africa/Blantyre" | "Africa/Brazzaville" | "Africa/Bujumbura" | "Africa/Cairo" | "Africa/Casablanca" | "Africa/Ceuta" | "Africa/Conakry" | "Africa/Dakar" | "Africa/Dar_es_Salaam" | "Africa/Djibouti" | "Africa/Douala" | "Africa/El_Aaiun" | "Africa/Freetown" | "Africa/Gaborone" | "Africa/Harare" | "Africa/Johannesburg" | "Africa/Juba" | "Africa/Kampala" | "Africa/Khartoum" | "Africa/Kigali" | "Africa/Kinshasa" | "Africa/Lagos" | "Africa/Libreville" | "Africa/Lome" | "Africa/Luanda" | "Africa/Lubumbashi" | "Africa/Lusaka" | "Africa/Malabo" | "Africa/Maputo" | "Africa/Maseru" | "Africa/Mbabane" | "Africa/Mogadishu" | "Africa/Monrovia" | "Africa/Nairobi" | "Africa/Ndjamena" | "Africa/Niamey" | "Africa/Nouakchott" | "Africa/Ouagadougou" | "Africa/Porto-Novo" | "Africa/Sao_Tome" | "Africa/Timbuktu" | "Africa/Tripoli" | "Africa/Tunis" | "Africa/Windhoek" | "America/Adak" | "America/Anchorage" | "America/Anguilla" | "America/Antigua" | "America/Araguaina" | "America/Argentina/Buenos_Aires" | "America/Argentina/Catamarca" | "America/Argentina/ComodRivadavia" | "America/Argentina/Cordoba" | "America/Argentina/Jujuy" | "America/Argentina/La_Rioja" | "America/Argentina/Mendoza" | "America/Argentina/Rio_Gallegos" | "America/Argentina/Salta" | "America/Argentina/San_Juan" | "America/Argentina/San_Luis" | "America/Argentina/Tucuman" | "America/Argentina/Ushuaia" | "America/Aruba" | "America/Asuncion" | "America/Atikokan" | "America/Atka" | "America/Bahia" | "America/Bahia_Banderas" | "America/Barbados" | "America/Belem" | "America/Belize" | "America/Blanc-Sablon" | "America/Boa_Vista" | "America/Bogota" | "America/Boise" | "America/Buenos_Aires" | "America/Cambridge_Bay" | "America/Campo_Grande" | "America/Cancun" | "America/Caracas" | "America/Catamarca" | "America/Cayenne" | "America/Cayman" | "America/Chicago" | "America/Chihuahua" | "America/Ciudad_Juarez" | "America/Coral_Harbour" | "America/Cordoba" | "America/Costa_Rica" | "America/Coyhaique" | "America/Creston" | "America/Cuiaba" | "America/Curacao" | "America/Danmarkshavn" | "America/Dawson" | "America/Dawson_Creek" | "America/Denver" | "America/Detroit" | "America/Dominica" | "America/Edmonton" | "America/Eirunepe" | "America/El_Salvador" | "America/Ensenada" | "America/Fort_Nelson" | "America/Fort_Wayne" | "America/Fortaleza" | "America/Glace_Bay" | "America/Godthab" | "America/Goose_Bay" | "America/Grand_Turk" | "America/Grenada" | "America/Guadeloupe" | "America/Guatemala" | "America/Guayaquil" | "America/Guyana" | "America/Halifax" | "America/Havana" | "America/Hermosillo" | "America/Indiana/Indianapolis" | "America/Indiana/Knox" | "America/Indiana/Marengo" | "America/Indiana/Petersburg" | "America/Indiana/Tell_City" | "America/Indiana/Vevay" | "America/Indiana/Vincennes" | "America/Indiana/Winamac" | "America/Indianapolis" | "America/Inuvik" | "America/Iqaluit" | "America/Jamaica" | "America/Jujuy" | "America/Juneau" | "America/Kentucky/Louisville" | "America/Kentucky/Monticello" | "America/Knox_IN" | "America/Kralendijk" | "America/La_Paz" | "America/Lima" | "America/Los_Angeles" | "America/Louisville" | "America/Lower_Princes" | "America/Maceio" | "America/Managua" | "America/Manaus" | "America/Marigot" | "America/Martinique" | "America/Matamoros" | "America/Mazatlan" | "America/Mendoza" | "America/Menominee" | "America/Merida" | "America/Metlakatla" | "America/Mexico_City" | "America/Miquelon" | "America/Moncton" | "America/Monterrey" | "America/Montevideo" | "America/Montreal" | "America/Montserrat" | "America/Nassau" | "America/New_York" | "America/Nipigon" | "America/Nome" | "America/Noronha" | "America/North_Dakota/Beulah" | "America/North_Dakota/Center" | "America/North_Dakota/New_Salem" | "America/Nuuk" | "America/Ojinaga" | "America/Panama" | "America/Pangnirtung" | "America/Paramaribo" | "America/Phoenix" | "America/Port-au-Prince" | "America/Port_of_Spain" | "America/Porto_Acre" | "America/Porto_Velho" | "America/Puerto_Rico" | "America/Punta_Arenas" | "America/Rainy_River" | "America/Rankin_Inlet" | "America/Recife" | "America/Regina" | "America/Resolute" | "America/Rio_Branco" | "America/Rosario" | "America/Santa_Isabel" | "America/Santarem" | "America/Santiago" | "America/Santo_Domingo" | "America/Sao_Paulo" | "America/Scoresbysund" | "America/Shiprock" | "America/Sitka" | "America/St_Barthelemy" | "America/St_Johns" | "America/St_Kitts" | "America/St_Lucia" | "America/St_Thomas" | "America/St_Vincent" | "America/Swift_Current" | "America/Tegucigalpa" | "America/Thule" | "America/Thunder_Bay" | "America/Tijuana" | "America/Toronto" | "America/Tortola" | "America/Vancouver" | "America/Virgin" | "America/Whitehorse" | "America/Winnipeg" | "America/Yakutat" | "America/Yellowknife" | "Antarctica/Casey" | "Antarctica/Davis" | "Antarctica/DumontDUrville" | "Antarctica/Macquarie" | "Antarctica/Mawson" | "Antarctica/McMurdo" | "Antarctica/Palmer" | "Antarctica/Rothera" | "Antarctica/South_Pole" | "Antarctica/Syowa" | "Antarctica/Troll" | "Antarctica/Vostok" | "Arctic/Longyearbyen" | "Asia/Aden" | "Asia/Almaty" | "Asia/Amman" | "Asia/Anadyr" | "Asia/Aqtau" | "Asia/Aqtobe" | "Asia/Ashgabat" | "Asia/Ashkhabad" | "Asia/Atyrau" | "Asia/Baghdad" | "Asia/Bahrain" | "Asia/Baku" | "Asia/Bangkok" | "Asia/Barnaul" | "Asia/Beirut" | "Asia/Bishkek" | "Asia/Brunei" | "Asia/Calcutta" | "Asia/Chita" | "Asia/Choibalsan" | "Asia/Chongqing" | "Asia/Chungking" | "Asia/Colombo" | "Asia/Dacca" | "Asia/Damascus" | "Asia/Dhaka" | "Asia/Dili" | "Asia/Dubai" | "Asia/Dushanbe" | "Asia/Famagusta" | "Asia/Gaza" | "Asia/Harbin" | "Asia/Hebron" | "Asia/Ho_Chi_Minh" | "Asia/Hong_Kong" | "Asia/Hovd" | "Asia/Irkutsk" | "Asia/Istanbul" | "Asia/Jakarta" | "Asia/Jayapura" | "Asia/Jerusalem" | "Asia/Kabul" | "Asia/Kamchatka" | "Asia/Karachi" | "Asia/Kashgar" | "Asia/Kathmandu" | "Asia/Katmandu" | "Asia/Khandyga" | "Asia/Kolkata" | "Asia/Krasnoyarsk" | "Asia/Kuala_Lumpur" | "Asia/Kuching" | "Asia/Kuwait" | "Asia/Macao" | "Asia/Macau" | "Asia/Magadan" | "Asia/Makassar" | "Asia/Manila" | "Asia/Muscat" | "Asia/Nicosia" | "Asia/Novokuznetsk" | "Asia/Novosibirsk" | "Asia/Omsk" | "Asia/Oral" | "Asia/Phnom_Penh" | "Asia/Pontianak" | "Asia/Pyongyang" | "Asia/Qatar" | "Asia/Qostanay" | "Asia/Qyzylorda" | "Asia/Rangoon" | "Asia/Riyadh" | "Asia/Saigon" | "Asia/Sakhalin" | "Asia/Samarkand" | "Asia/Seoul" | "Asia/Shanghai" | "Asia/Singapore" | "Asia/Srednekolymsk" | "Asia/Taipei" | "Asia/Tashkent" | "Asia/Tbilisi" | "Asia/Tehran" | "Asia/Tel_Aviv" | "Asia/Thimbu" | "Asia/Thimphu" | "Asia/Tokyo" | "Asia/Tomsk" | "Asia/Ujung_Pandang" | "Asia/Ulaanbaatar" | "Asia/Ulan_Bator" | "Asia/Urumqi" | "Asia/Ust-Nera" | "Asia/Vientiane" | "Asia/Vladivostok" | "Asia/Yakutsk" | "Asia/Yangon" | "Asia/Yekaterinburg" | "Asia/Yerevan" | "Atlantic/Azores" | "Atlantic/Bermuda" | "Atlantic/Canary" | "Atlantic/Cape_Verde" | "Atlantic/Faeroe" | "Atlantic/Faroe" | "Atlantic/Jan_Mayen" | "Atlantic/Madeira" | "Atlantic/Reykjavik" | "Atlantic/South_Georgia" | "Atlantic/St_Helena" | "Atlantic/Stanley" | "Australia/ACT" | "Australia/Adelaide" | "Australia/Brisbane" | "Australia/Broken_Hill" | "Australia/Canberra" | "Australia/Currie" | "Australia/Darwin" | "Australia/Eucla" | "Australia/Hobart" | "Australia/LHI" | "Australia/Lindeman" | "Australia/Lord_Howe" | "Australia/Melbourne" | "Australia/NSW" | "Australia/North" | "Australia/Perth" | "Australia/Queensland" | "Australia/South" | "Australia/Sydney" | "Australia/Tasmania" | "Australia/Victoria" | "Australia/West" | "Australia/Yancowinna" | "Brazil/Acre" | "Brazil/DeNoronha" | "Brazil/East" | "Brazil/West" | "CET" | "CST6CDT" | "Canada/Atlantic" | "Canada/Central" | "Canada/Eastern" | "Canada/Mountain" | "Canada/Newfoundland" | "Canada/Pacific" | "Canada/Saskatchewan" | "Canada/Yukon" | "Chile/Continental" | "Chile/EasterIsland" | "Cuba" | "EET" | "EST" | "EST5EDT" | "Egypt" | "Eire" | "Etc/GMT" | "Etc/GMT+0" | "Etc/GMT+1" | "Etc/GMT+10" | "Etc/GMT+11" | "Etc/GMT+12" | "Etc/GMT+2" | "Etc/GMT+3" | "Etc/GMT+4" | "Etc/GMT+5" | "Etc/GMT+6" | "Etc/GMT+7" | "Etc/GMT+8" | "Etc/GMT+9" | "Etc/GMT-0" | "Etc/GMT-1" | "Etc/GMT-10" | "Etc/GMT-11" | "Etc/GMT-12" | "Etc/GMT-13" | "Etc/GMT-14" | "Etc/GMT-2" | "Etc/GMT-3" | "Etc/GMT-4" | "Etc/GMT-5" | "Etc/GMT-6" | "Etc/GMT-7" | "Etc/GMT-8" | "Etc/GMT-9" | "Etc/GMT0" | "Etc/Greenwich" | "Etc/UCT" | "Etc/UTC" | "Etc/Universal" | "Etc/Zulu" | "Europe/Amsterdam" | "Europe/Andorra" | "Europe/Astrakhan" | "Europe/Athens" | "Europe/Belfast" | "Europe/Belgrade" | "Europe/Berlin" | "Europe/Bratislava" | "Europe/Brussels" | "Europe/Bucharest" | "Europe/Budapest" | "Europe/Busingen" | "Europe/Chisinau" | "Europe/Copenhagen" | "Europe/Dublin" | "Europe/Gibraltar" | "Europe/Guernsey" | "Europe/Helsinki" | "Europe/Isle_of_Man" | "Europe/Istanbul" | "Europe/Jersey" | "Europe/Kaliningrad" | "Europe/Kiev" | "Europe/Kirov" | "Europe/Kyiv" | "Europe/Lisbon" | "Europe/Ljubljana" | "Europe/London" | "Europe/Luxembourg" | "Europe/Madrid" | "Europe/Malta" | "Europe/Mariehamn" | "Europe/Minsk" | "Europe/Monaco" | "Europe/Moscow" | "Europe/Nicosia" | "Europe/Oslo" | "Europe/Paris" | "Europe/Podgorica" | "Europe/Prague" | "Europe/Riga" | "Europe/Rome" | "Europe/Samara" | "Europe/San_Marino" | "Europe/Sarajevo" | "Europe/Saratov" | "Europe/Simferopol" | "Europe/Skopje" | "Europe/Sofia" | "Europe/Stockholm" | "Europe/Tallinn" | "Europe/Tirane" | "Europe/Tiraspol" | "Europe/Ulyanovsk" | "Europe/Uzhgorod" | "Europe/Vaduz" | "Europe/Vatican" | "Europe/Vienna" | "Europe/Vilnius" | "Europe/Volgograd" | "Europe/Warsaw" | "Europe/Zagreb" | "Europe/Zaporozhye" | "Europe/Zurich" | "Factory" | "GB" | "GB-Eire" | "GMT" | "GMT+0" | "GMT-0" | "GMT0" | "Greenwich" | "HST" | "Hongkong" | "Iceland" | "Indian/Antananarivo" | "Indian/Chagos" | "Indian/Christmas" | "Indian/Cocos" | "Indian/Comoro" | "Indian/Kerguelen" | "Indian/Mahe" | "Indian/Maldives" | "Indian/Mauritius" | "Indian/Mayotte" | "Indian/Reunion" | "Iran" | "Israel" | "Jamaica" | "Japan" | "Kwajalein" | "Libya" | "MET" | "MST" | "MST7MDT" | "Mexico/BajaNorte" | "Mexico/BajaSur" | "Mexico/General" | "NZ" | "NZ-CHAT" | "Navajo" | "PRC" | "PST8PDT" | "Pacific/Apia" | "Pacific/Auckland" | "Pacific/Bougainville" | "Pacific/Chatham" | "Pacific/Chuuk" | "Pacific/Easter" | "Pacific/Efate" | "Pacific/Enderbury" | "Pacific/Fakaofo" | "Pacific/Fiji" | "Pacific/Funafuti" | "Pacific/Galapagos" | "Pacific/Gambier" | "Pacific/Guadalcanal" | "Pacific/Guam" | "Pacific/Honolulu" | "Pacific/Johnston" | "Pacific/Kanton" | "Pacific/Kiritimati" | "Pacific/Kosrae" | "Pacific/Kwajalein" | "Pacific/Majuro" | "Pacific/Marquesas" | "Pacific/Midway" | "Pacific/Nauru" | "Pacific/Niue" | "Pacific/Norfolk" | "Pacific/Noumea" | "Pacific/Pago_Pago" | "Pacific/Palau" | "Pacific/Pitcairn" | "Pacific/Pohnpei" | "Pacific/Ponape" | "Pacific/Port_Moresby" | "Pacific/Rarotonga" | "Pacific/Saipan" | "Pacific/Samoa" | "Pacific/Tahiti" | "Pacific/Tarawa" | "Pacific/Tongatapu" | "Pacific/Truk" | "Pacific/Wake" | "Pacific/Wallis" | "Pacific/Yap" | "Poland" | "Portugal" | "ROC" | "ROK" | "Singapore" | "Turkey" | "UCT" | "US/Alaska" | "US/Aleutian" | "US/Arizona" | "US/Central" | "US/East-Indiana" | "US/Eastern" | "US/Hawaii" | "US/Indiana-Starke" | "US/Michigan" | "US/Mountain" | "US/Pacific" | "US/Samoa" | "UTC" | "Universal" | "W-SU" | "WET" | "Zulu" | "localtime" | "posixrules" | null;
        };
        /** @description `POST /v1/organizations`. */
        CreateOrganization: {
            /** @description Its name. */
            name: string;
        };
        /** @description `POST /v1/principals`. */
        CreatePrincipal: {
            /** @description `service` or `person`. */
            kind: components["schemas"]["PrincipalKind"];
            /** @description Unique per organization. */
            name: string;
            /** @description What it may do. */
            role: components["schemas"]["Role"];
        };
        /**
         * @description `POST /v1/queues`: a name and the settings that differ from the
         *     defaults.
         */
        CreateQueue: {
            /** Format: int64 */
            dedup_window_s?: number | null;
            /** Format: int32 */
            dispatch_deadline_s?: number | null;
            /** Format: int64 */
            failed_retention_s?: number | null;
            /**
             * Format: int32
             * @description Most tasks of one group running at once, across nodes (1–10000);
             *     absent or null: no limit.
             */
            group_concurrency?: number | null;
            group_order?: components["schemas"]["GroupOrder"] | null;
            header_style?: components["schemas"]["TaskHeaderStyle"] | null;
            mode?: components["schemas"]["QueueMode"] | null;
            name: string;
            on_failure?: components["schemas"]["CallbackSpec"] | null;
            on_success?: components["schemas"]["CallbackSpec"] | null;
            /**
             * @description Pull queues only: completing or failing a task is then a
             *     person-only action (403 `USER_IDENTITY_REQUIRED` to a service key).
             */
            person_only?: boolean | null;
            rate_limits?: components["schemas"]["RateLimitsPatch"] | null;
            retry_config?: components["schemas"]["RetryConfigPatch"] | null;
        };
        /**
         * @description `POST /v1/queues/{queue}/tasks` (the JSON body, or the `task` part of a
         *     multipart one).
         */
        CreateTask: {
            /** Format: int32 */
            dispatch_deadline_s?: number | null;
            /**
             * @description The group it takes turns and counts its queue's
             *     `group_concurrency` in (a customer, an account, a domain); absent:
             *     the queue's ungrouped tasks, one group for fairness, with no limit.
             */
            group?: string | null;
            header_style?: components["schemas"]["TaskHeaderStyle"] | null;
            on_failure?: components["schemas"]["CallbackSpec"] | null;
            on_success?: components["schemas"]["CallbackSpec"] | null;
            payload?: components["schemas"]["PayloadSpec"] | null;
            /**
             * Format: int32
             * @description −100…100, default 0: higher runs first within its group.
             */
            priority?: number | null;
            retry_config?: components["schemas"]["RetryConfigPatch"] | null;
            /** Format: date-time */
            schedule_time?: string | null;
            /** @description A pull queue's task: a name claims may filter on. */
            tag?: string | null;
            target?: components["schemas"]["TargetSpec"] | null;
            task_id?: string | null;
        };
        /**
         * @description `POST /v1/queues/{queue}/tasks:batch` as JSON: 1–1000 creates, each as
         *     `POST /v1/queues/{queue}/tasks` takes it, committed together.
         */
        CreateTasks: {
            /**
             * @description All or nothing: the first item that cannot be created is the
             *     answer, and no task is created.
             */
            atomic?: boolean;
            tasks: components["schemas"]["CreateTask"][];
        };
        /** @description `POST /v1/webhooks`: where an organization's events go. */
        CreateWebhook: {
            /** @description At least one of `task.failed`, `job.run_failed`. */
            events: ("task.failed" | "job.run_failed")[];
            /**
             * Format: uri
             * @description An http or https URL, subject to the target policy; it receives a
             *     signed `POST` with the event as JSON.
             */
            url: string;
        };
        EndedTasks: {
            results: {
                problem?: components["schemas"]["Problem"];
                /** @description true when the item repeated the end that finished the task (same attempt, same result or error): nothing changed */
                replayed?: boolean;
                /** @enum {integer} */
                status: 200 | 403 | 404 | 409 | 503;
                task?: components["schemas"]["TaskView"];
            }[];
        };
        /**
         * @description One attempt's end: a completion (with an optional `result`) or, when
         *     `error` is given, a failure.
         */
        EndTask: {
            attempt_id: string;
            /**
             * @description For a failure: why the attempt failed (at most 4,096 characters,
             *     without U+0000); the retry policy decides what follows.
             */
            error?: string | null;
            /**
             * @description For a completion: any JSON value up to 64 KiB, shown on the task
             *     afterwards.
             */
            result?: unknown;
            task_id: string;
        };
        /**
         * @description `POST /v1/queues/{queue}/tasks:end`: the ends of attempts a worker
         *     holds, reported together.
         */
        EndTasks: {
            /** @description 1–100 ends, answered in this order. */
            ends: components["schemas"]["EndTask"][];
        };
        /**
         * @description What happened.
         * @enum {string}
         */
        EventType: "task.succeeded" | "task.failed" | "job.run_failed";
        /** @description `POST …/tasks/{task_id}/fail`. */
        FailTask: {
            attempt_id: string;
            /**
             * @description Why the attempt failed; recorded with it. At most 4,096 characters,
             *     without U+0000.
             */
            error?: string;
        };
        GroupList: {
            items: components["schemas"]["GroupView"][];
            next_page_token: string | null;
        };
        /**
         * @description The order of a group's tasks (API.md §13).
         * @enum {string}
         */
        GroupOrder: "none" | "fifo";
        /** @description A group's live tasks. */
        GroupView: {
            /**
             * Format: int64
             * @description Tasks due now, waiting for a slot or a turn.
             */
            due: number;
            /** @description The group's name, as its tasks carry it. */
            group: string;
            /**
             * Format: int64
             * @description Tasks of the group running now (a pull lease holds its slot).
             */
            running: number;
            /**
             * Format: int64
             * @description Tasks waiting for their schedule time or a retry's backoff.
             */
            scheduled: number;
        };
        /**
         * @description Which compatibility headers a delivery carries besides Idem's own:
         *     `cloud_scheduler` for a job's runs, `cloud_tasks` for a queue's tasks.
         * @enum {string}
         */
        HeaderStyle: "idem" | "cloud_scheduler" | "cloud_tasks";
        /** @description `POST …/tasks/{task_id}/heartbeat`. */
        Heartbeat: {
            attempt_id: string;
            /**
             * Format: int32
             * @description 1–3600 (default 60): the lease then ends this long from now.
             */
            lease_s?: number | null;
        };
        /** @description `GET /v1/idempotency-keys/{key}`: the caller's own record of a key. */
        IdempotencyKeyView: {
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            expires_at: string;
            /** @description Digest of the request's fingerprint. */
            fingerprint: string;
            key: string;
            resource?: components["schemas"]["ResourceView"] | null;
            /** @description `in_progress` or `completed`. */
            state: string;
            /** Format: int32 */
            status?: number | null;
        };
        /**
         * @description Which compatibility headers a job's runs carry besides Idem's own.
         * @enum {string}
         */
        JobHeaderStyle: "idem" | "cloud_scheduler";
        JobList: {
            items: components["schemas"]["JobView"][];
            next_page_token: string | null;
        };
        /**
         * @description A job's retry policy, in Cloud Scheduler's terms: `retry_count` retries
         *     after the first attempt.
         */
        JobRetryConfig: {
            /** Format: int64 */
            max_backoff_ms: number;
            /** Format: int32 */
            max_doublings: number;
            /** Format: int64 */
            max_retry_duration_s: number;
            /** Format: int64 */
            min_backoff_ms: number;
            /** Format: int32 */
            retry_count: number;
        };
        JobRetryConfigPatch: {
            /** Format: int64 */
            max_backoff_ms?: number | null;
            /** Format: int32 */
            max_doublings?: number | null;
            /** Format: int64 */
            max_retry_duration_s?: number | null;
            /** Format: int64 */
            min_backoff_ms?: number | null;
            /** Format: int32 */
            retry_count?: number | null;
        };
        /** @description The body of a `job.run_failed` delivery. */
        JobRunEvent: {
            /** @description The job's name. */
            job: string;
            /** @description The run as it ended, with its last attempt. */
            run: components["schemas"]["RunView"];
            /** @description `job.run_failed`. */
            type: components["schemas"]["EventType"];
        };
        /** @enum {string} */
        JobState: "enabled" | "paused";
        /** @description A cron job as the API shows it. */
        JobView: {
            /**
             * Format: int32
             * @description How long the target has to answer, in seconds.
             */
            attempt_deadline_s: number;
            /** @description What happens to instants missed while no scheduler ran. */
            catch_up: components["schemas"]["CatchUp"];
            /**
             * Format: date-time
             * @description When the job was created.
             */
            created_at: string;
            /** @description Which headers runs carry. */
            header_style: components["schemas"]["HeaderStyle"];
            last_run?: components["schemas"]["RunView"] | null;
            /** @description Unique per organization. */
            name: string;
            /**
             * Format: date-time
             * @description The next scheduled instant; null while paused.
             */
            next_run_time?: string | null;
            /**
             * @description Why the scheduler paused the job: it could not fire it (its stored
             *     schedule no longer parses). Null otherwise; cleared when the job is
             *     changed or resumed.
             */
            paused_reason?: string | null;
            /** @description How failed runs are retried. */
            retry_config: components["schemas"]["JobRetryConfig"];
            /** @description The cron expression. */
            schedule: string;
            /** @description `enabled` or `paused`. */
            state: components["schemas"]["JobState"];
            /** @description What each run delivers. */
            target: components["schemas"]["TargetView"];
            /** @description The IANA time zone the schedule is evaluated in. */
            time_zone: string;
            /**
             * Format: date-time
             * @description When its configuration or state last changed: the version an update
             *     names in `expected_updated_at`.
             */
            updated_at: string;
        };
        /** @description One public key: an elliptic-curve key on P-256 for ES256. */
        Jwk: {
            /** @description `ES256`. */
            alg: string;
            /** @description `P-256`. */
            crv: string;
            /** @description The key's ID, named by the `kid` header of the tokens it signed. */
            kid: string;
            /** @description `EC`. */
            kty: string;
            /** @description `sig`. */
            use: string;
            /** @description The point's x coordinate, base64url. */
            x: string;
            /** @description The point's y coordinate, base64url. */
            y: string;
        };
        /**
         * @description A JSON Web Key Set (RFC 7517): every organization's public keys that
         *     signed tokens which may not have expired yet.
         */
        Jwks: {
            keys: components["schemas"]["Jwk"][];
        };
        /** @description A worker's lease on a pull task. */
        Lease: {
            /**
             * @description The lease's token: heartbeat, complete, fail, release and reassign
             *     name it. Shown only to the lease's holder and to admins.
             */
            attempt_id?: string | null;
            /** @description The principal holding the task. */
            claimant: string;
            /**
             * Format: date-time
             * @description When the task goes back to the queue unless the lease is extended.
             */
            lease_expires_at: string;
        };
        /** @description A new API key, with its secret: shown this once. */
        NewApiKeyView: {
            /**
             * Format: date-time
             * @description When it was created.
             */
            created_at: string;
            /** @description The key's ID. */
            id: string;
            /** @description The secret to send as `Authorization: Bearer …`. */
            key: string;
            /** @description The principal it acts as. */
            principal: string;
        };
        /** @description The ID token a target receives with each delivery, resolved. */
        Oidc: {
            /** @description The token's `aud`. */
            audience: string;
        };
        /** @description A target's request for an OIDC ID token, as sent in a create request. */
        OidcSpec: {
            /**
             * @description The token's `aud`; by default the target URL's origin
             *     (`https://example.com:8443`). At most 512 characters.
             */
            audience?: string | null;
        };
        /**
         * @description `GET /.well-known/openid-configuration` (OpenID Connect Discovery 1.0),
         *     as much of it as a verifier of ID tokens reads.
         */
        OpenIdConfiguration: {
            /** @description The claims a token carries. */
            claims_supported: string[];
            /** @description `["ES256"]`. */
            id_token_signing_alg_values_supported: string[];
            /** @description The `iss` of every token: the server's public URL. */
            issuer: string;
            /** @description Where the keys of every organization are published. */
            jwks_uri: string;
            /** @description `["id_token"]`: Idem issues tokens only for its own deliveries. */
            response_types_supported: string[];
            /** @description `["public"]`: `sub` is `org/<organization>`. */
            subject_types_supported: string[];
        };
        /** @description A new organization with its first admin key, shown this once. */
        OrganizationView: {
            /** @description The organization's first admin key, shown once. */
            admin_key: string;
            /** @description Its name. */
            name: string;
        };
        /**
         * @description A pull task's payload as sent: at most one of text, base64 bytes and
         *     any JSON value, which the worker that claims it reads back as given.
         */
        PayloadSpec: {
            /** @description UTF-8 text. */
            body?: string | null;
            /** @description Bytes, base64. */
            body_base64?: string | null;
            /** @description Any JSON value (`null` included). */
            json?: unknown;
        };
        /** @description A pull task's payload as the API shows it, in the form it was given. */
        PayloadView: {
            /** @description Text. */
            body?: string | null;
            /** @description Bytes, base64. */
            body_base64?: string | null;
            /** @description A JSON value, with its numbers spelled as sent. */
            json?: unknown;
        };
        /** @description `POST /v1/schedules/preview`: the next instants of a schedule. */
        PreviewRequest: {
            /**
             * Format: date-time
             * @description Instants strictly after this one; now when absent.
             */
            after?: string | null;
            /** @description 1–1000, default 10. */
            count?: number | null;
            /** @description The cron expression. */
            schedule: string;
            /**
             * @description IANA time zone (default `UTC`).
             * @enum {string|null}
             */
            time_zone?: "Africa/Abidjan" | "Africa/Accra" | "Africa/Addis_Ababa" | "Africa/Algiers" | "Africa/Asmara" | "Africa/Asmera" | "Africa/Bamako" | "Africa/Bangui" | "Africa/Banjul" | "Africa/Bissau" | "Africa/Blantyre" | "Africa/Brazzaville" | "Africa/Bujumbura" | "Africa/Cairo" | "Africa/Casablanca" | "Africa/Ceuta" | "Africa/Conakry" | "Africa/Dakar" | "Africa/Dar_es_Salaam" | "Africa/Djibouti" | "Africa/Douala" | "Africa/El_Aaiun" | "Africa/Freetown" | "Africa/Gaborone" | "Africa/Harare" | "Africa/Johannesburg" | "Africa/Juba" | "Africa/Kampala" | "Africa/Khartoum" | "Africa/Kigali" | "Africa/Kinshasa" | "Africa/Lagos" | "Africa/Libreville" | "Africa/Lome" | "Africa/Luanda" | "Africa/Lubumbashi" | "Africa/Lusaka" | "Africa/Malabo" | "Africa/Maputo" | "Africa/Maseru" | "Africa/Mbabane" | "Africa/Mogadishu" | "Africa/Monrovia" | "Africa/Nairobi" | "Africa/Ndjamena" | "Africa/Niamey" | "Africa/Nouakchott" | "Africa/Ouagadougou" | "Africa/Porto-Novo" | "Africa/Sao_Tome" | "Africa/Timbuktu" | "Africa/Tripoli" | "Africa/Tunis" | "Africa/Windhoek" | "America/Adak" | "America/Anchorage" | "America/Anguilla" | "America/Antigua" | "America/Araguaina" | "America/Argentina/Buenos_Aires" | "America/Argentina/Catamarca" | "America/Argentina/ComodRivadavia" | "America/Argentina/Cordoba" | "America/Argentina/Jujuy" | "America/Argentina/La_Rioja" | "America/Argentina/Mendoza" | "America/Argentina/Rio_Gallegos" | "America/Argentina/Salta" | "America/Argentina/San_Juan" | "America/Argentina/San_Luis" | "America/Argentina/Tucuman" | "America/Argentina/Ushuaia" | "America/Aruba" | "America/Asuncion" | "America/Atikokan" | "America/Atka" | "America/Bahia" | "America/Bahia_Banderas" | "America/Barbados" | "America/Belem" | "America/Belize" | "America/Blanc-Sablon" | "America/Boa_Vista" | "America/Bogota" | "America/Boise" | "America/Buenos_Aires" | "America/Cambridge_Bay" | "America/Campo_Grande" | "America/Cancun" | "America/Caracas" | "America/Catamarca" | "America/Cayenne" | "America/Cayman" | "America/Chicago" | "America/Chihuahua" | "America/Ciudad_Juarez" | "America/Coral_Harbour" | "America/Cordoba" | "America/Costa_Rica" | "America/Coyhaique" | "America/Creston" | "America/Cuiaba" | "America/Curacao" | "America/Danmarkshavn" | "America/Dawson" | "America/Dawson_Creek" | "America/Denver" | "America/Detroit" | "America/Dominica" | "America/Edmonton" | "America/Eirunepe" | "America/El_Salvador" | "America/Ensenada" | "America/Fort_Nelson" | "America/Fort_Wayne" | "America/Fortaleza" | "America/Glace_Bay" | "America/Godthab" | "America/Goose_Bay" | "America/Grand_Turk" | "America/Grenada" | "America/Guadeloupe" | "America/Guatemala" | "America/Guayaquil" | "America/Guyana" | "America/Halifax" | "America/Havana" | "America/Hermosillo" | "America/Indiana/Indianapolis" | "America/Indiana/Knox" | "America/Indiana/Marengo" | "America/Indiana/Petersburg" | "America/Indiana/Tell_City" | "America/Indiana/Vevay" | "America/Indiana/Vincennes" | "America/Indiana/Winamac" | "America/Indianapolis" | "America/Inuvik" | "America/Iqaluit" | "America/Jamaica" | "America/Jujuy" | "America/Juneau" | "America/Kentucky/Louisville" | "America/Kentucky/Monticello" | "America/Knox_IN" | "America/Kralendijk" | "America/La_Paz" | "America/Lima" | "America/Los_Angeles" | "America/Louisville" | "America/Lower_Princes" | "America/Maceio" | "America/Managua" | "America/Manaus" | "America/Marigot" | "America/Martinique" | "America/Matamoros" | "America/Mazatlan" | "America/Mendoza" | "America/Menominee" | "America/Merida" | "America/Metlakatla" | "America/Mexico_City" | "America/Miquelon" | "America/Moncton" | "America/Monterrey" | "America/Montevideo" | "America/Montreal" | "America/Montserrat" | "America/Nassau" | "America/New_York" | "America/Nipigon" | "America/Nome" | "America/Noronha" | "America/North_Dakota/Beulah" | "America/North_Dakota/Center" | "America/North_Dakota/New_Salem" | "America/Nuuk" | "America/Ojinaga" | "America/Panama" | "America/Pangnirtung" | "America/Paramaribo" | "America/Phoenix" | "America/Port-au-Prince" | "America/Port_of_Spain" | "America/Porto_Acre" | "America/Porto_Velho" | "America/Puerto_Rico" | "America/Punta_Arenas" | "America/Rainy_River" | "America/Rankin_Inlet" | "America/Recife" | "America/Regina" | "America/Resolute" | "America/Rio_Branco" | "America/Rosario" | "America/Santa_Isabel" | "America/Santarem" | "America/Santiago" | "America/Santo_Domingo" | "America/Sao_Paulo" | "America/Scoresbysund" | "America/Shiprock" | "America/Sitka" | "America/St_Barthelemy" | "America/St_Johns" | "America/St_Kitts" | "America/St_Lucia" | "America/St_Thomas" | "America/St_Vincent" | "America/Swift_Current" | "America/Tegucigalpa" | "America/Thule" | "America/Thunder_Bay" | "America/Tijuana" | "America/Toronto" | "America/Tortola" | "America/Vancouver" | "America/Virgin" | "America/Whitehorse" | "America/Winnipeg" | "America/Yakutat" | "America/Yellowknife" | "Antarctica/Casey" | "Antarctica/Davis" | "Antarctica/DumontDUrville" | "Antarctica/Macquarie" | "Antarctica/Mawson" | "Antarctica/McMurdo" | "Antarctica/Palmer" | "Antarctica/Rothera" | "Antarctica/South_Pole" | "Antarctica/Syowa" | "Antarctica/Troll" | "Antarctica/Vostok" | "Arctic/Longyearbyen" | "Asia/Aden" | "Asia/Almaty" | "Asia/Amman" | "Asia/Anadyr" | "Asia/Aqtau" | "Asia/Aqtobe" | "Asia/Ashgabat" | "Asia/Ashkhabad" | "Asia/Atyrau" | "Asia/Baghdad" | "Asia/Bahrain" | "Asia/Baku" | "Asia/Bangkok" | "Asia/Barnaul" | "Asia/Beirut" | "Asia/Bishkek" | "Asia/Brunei" | "Asia/Calcutta" | "Asia/Chita" | "Asia/Choibalsan" | "Asia/Chongqing" | "Asia/Chungking" | "Asia/Colombo" | "Asia/Dacca" | "Asia/Damascus" | "Asia/Dhaka" | "Asia/Dili" | "Asia/Dubai" | "Asia/Dushanbe" | "Asia/Famagusta" | "Asia/Gaza" | "Asia/Harbin" | "Asia/Hebron" | "Asia/Ho_Chi_Minh" | "Asia/Hong_Kong" | "Asia/Hovd" | "Asia/Irkutsk" | "Asia/Istanbul" | "Asia/Jakarta" | "Asia/Jayapura" | "Asia/Jerusalem" | "Asia/Kabul" | "Asia/Kamchatka" | "Asia/Karachi" | "Asia/Kashgar" | "Asia/Kathmandu" | "Asia/Katmandu" | "Asia/Khandyga" | "Asia/Kolkata" | "Asia/Krasnoyarsk" | "Asia/Kuala_Lumpur" | "Asia/Kuching" | "Asia/Kuwait" | "Asia/Macao" | "Asia/Macau" | "Asia/Magadan" | "Asia/Makassar" | "Asia/Manila" | "Asia/Muscat" | "Asia/Nicosia" | "Asia/Novokuznetsk" | "Asia/Novosibirsk" | "Asia/Omsk" | "Asia/Oral" | "Asia/Phnom_Penh" | "Asia/Pontianak" | "Asia/Pyongyang" | "Asia/Qatar" | "Asia/Qostanay" | "Asia/Qyzylorda" | "Asia/Rangoon" | "Asia/Riyadh" | "Asia/Saigon" | "Asia/Sakhalin" | "Asia/Samarkand" | "Asia/Seoul" | "Asia/Shanghai" | "Asia/Singapore" | "Asia/Srednekolymsk" | "Asia/Taipei" | "Asia/Tashkent" | "Asia/Tbilisi" | "Asia/Tehran" | "Asia/Tel_Aviv" | "Asia/Thimbu" | "Asia/Thimphu" | "Asia/Tokyo" | "Asia/Tomsk" | "Asia/Ujung_Pandang" | "Asia/Ulaanbaatar" | "Asia/Ulan_Bator" | "Asia/Urumqi" | "Asia/Ust-Nera" | "Asia/Vientiane" | "Asia/Vladivostok" | "Asia/Yakutsk" | "Asia/Yangon" | "Asia/Yekaterinburg" | "Asia/Yerevan" | "Atlantic/Azores" | "Atlantic/Bermuda" | "Atlantic/Canary" | "Atlantic/Cape_Verde" | "Atlantic/Faeroe" | "Atlantic/Faroe" | "Atlantic/Jan_Mayen" | "Atlantic/Madeira" | "Atlantic/Reykjavik" | "Atlantic/South_Georgia" | "Atlantic/St_Helena" | "Atlantic/Stanley" | "Australia/ACT" | "Australia/Adelaide" | "Australia/Brisbane" | "Australia/Broken_Hill" | "Australia/Canberra" | "Australia/Currie" | "Australia/Darwin" | "Australia/Eucla" | "Australia/Hobart" | "Australia/LHI" | "Australia/Lindeman" | "Australia/Lord_Howe" | "Australia/Melbourne" | "Australia/NSW" | "Australia/North" | "Australia/Perth" | "Australia/Queensland" | "Australia/South" | "Australia/Sydney" | "Australia/Tasmania" | "Australia/Victoria" | "Australia/West" | "Australia/Yancowinna" | "Brazil/Acre" | "Brazil/DeNoronha" | "Brazil/East" | "Brazil/West" | "CET" | "CST6CDT" | "Canada/Atlantic" | "Canada/Central" | "Canada/Eastern" | "Canada/Mountain" | "Canada/Newfoundland" | "Canada/Pacific" | "Canada/Saskatchewan" | "Canada/Yukon" | "Chile/Continental" | "Chile/EasterIsland" | "Cuba" | "EET" | "EST" | "EST5EDT" | "Egypt" | "Eire" | "Etc/GMT" | "Etc/GMT+0" | "Etc/GMT+1" | "Etc/GMT+10" | "Etc/GMT+11" | "Etc/GMT+12" | "Etc/GMT+2" | "Etc/GMT+3" | "Etc/GMT+4" | "Etc/GMT+5" | "Etc/GMT+6" | "Etc/GMT+7" | "Etc/GMT+8" | "Etc/GMT+9" | "Etc/GMT-0" | "Etc/GMT-1" | "Etc/GMT-10" | "Etc/GMT-11" | "Etc/GMT-12" | "Etc/GMT-13" | "Etc/GMT-14" | "Etc/GMT-2" | "Etc/GMT-3" | "Etc/GMT-4" | "Etc/GMT-5" | "Etc/GMT-6" | "Etc/GMT-7" | "Etc/GMT-8" | "Etc/GMT-9" | "Etc/GMT0" | "Etc/Greenwich" | "Etc/UCT" | "Etc/UTC" | "Etc/Universal" | "Etc/Zulu" | "Europe/Amsterdam" | "Europe/Andorra" | "Europe/Astrakhan" | "Europe/Athens" | "Europe/Belfast" | "Europe/Belgrade" | "Europe/Berlin" | "Europe/Bratislava" | "Europe/Brussels" | "Europe/Bucharest" | "Europe/Budapest" | "Europe/Busingen" | "Europe/Chisinau" | "Europe/Copenhagen" | "Europe/Dublin" | "Europe/Gibraltar" | "Europe/Guernsey" | "Europe/Helsinki" | "Europe/Isle_of_Man" | "Europe/Istanbul" | "Europe/Jersey" | "Europe/Kaliningrad" | "Europe/Kiev" | "Europe/Kirov" | "Europe/Kyiv" | "Europe/Lisbon" | "Europe/Ljubljana" | "Europe/London" | "Europe/Luxembourg" | "Europe/Madrid" | "Europe/Malta" | "Europe/Mariehamn" | "Europe/Minsk" | "Europe/Monaco" | "Europe/Moscow" | "Europe/Nicosia" | "Europe/Oslo" | "Europe/Paris" | "Europe/Podgorica" | "Europe/Prague" | "Europe/Riga" | "Europe/Rome" | "Europe/Samara" | "Europe/San_Marino" | "Europe/Sarajevo" | "Europe/Saratov" | "Europe/Simferopol" | "Europe/Skopje" | "Europe/Sofia" | "Europe/Stockholm" | "Europe/Tallinn" | "Europe/Tirane" | "Europe/Tiraspol" | "Europe/Ulyanovsk" | "Europe/Uzhgorod" | "Europe/Vaduz" | "Europe/Vatican" | "Europe/Vienna" | "Europe/Vilnius" | "Europe/Volgograd" | "Europe/Warsaw" | "Europe/Zagreb" | "Europe/Zaporozhye" | "Europe/Zurich" | "Factory" | "GB" | "GB-Eire" | "GMT" | "GMT+0" | "GMT-0" | "GMT0" | "Greenwich" | "HST" | "Hongkong" | "Iceland" | "Indian/Antananarivo" | "Indian/Chagos" | "Indian/Christmas" | "Indian/Cocos" | "Indian/Comoro" | "Indian/Kerguelen" | "Indian/Mahe" | "Indian/Maldives" | "Indian/Mauritius" | "Indian/Mayotte" | "Indian/Reunion" | "Iran" | "Israel" | "Jamaica" | "Japan" | "Kwajalein" | "Libya" | "MET" | "MST" | "MST7MDT" | "Mexico/BajaNorte" | "Mexico/BajaSur" | "Mexico/General" | "NZ" | "NZ-CHAT" | "Navajo" | "PRC" | "PST8PDT" | "Pacific/Apia" | "Pacific/Auckland" | "Pacific/Bougainville" | "Pacific/Chatham" | "Pacific/Chuuk" | "Pacific/Easter" | "Pacific/Efate" | "Pacific/Enderbury" | "Pacific/Fakaofo" | "Pacific/Fiji" | "Pacific/Funafuti" | "Pacific/Galapagos" | "Pacific/Gambier" | "Pacific/Guadalcanal" | "Pacific/Guam" | "Pacific/Honolulu" | "Pacific/Johnston" | "Pacific/Kanton" | "Pacific/Kiritimati" | "Pacific/Kosrae" | "Pacific/Kwajalein" | "Pacific/Majuro" | "Pacific/Marquesas" | "Pacific/Midway" | "Pacific/Nauru" | "Pacific/Niue" | "Pacific/Norfolk" | "Pacific/Noumea" | "Pacific/Pago_Pago" | "Pacific/Palau" | "Pacific/Pitcairn" | "Pacific/Pohnpei" | "Pacific/Ponape" | "Pacific/Port_Moresby" | "Pacific/Rarotonga" | "Pacific/Saipan" | "Pacific/Samoa" | "Pacific/Tahiti" | "Pacific/Tarawa" | "Pacific/Tongatapu" | "Pacific/Truk" | "Pacific/Wake" | "Pacific/Wallis" | "Pacific/Yap" | "Poland" | "Portugal" | "ROC" | "ROK" | "Singapore" | "Turkey" | "UCT" | "US/Alaska" | "US/Aleutian" | "US/Arizona" | "US/Central" | "US/East-Indiana" | "US/Eastern" | "US/Hawaii" | "US/Indiana-Starke" | "US/Michigan" | "US/Mountain" | "US/Pacific" | "US/Samoa" | "UTC" | "Universal" | "W-SU" | "WET" | "Zulu" | "localtime" | "posixrules" | null;
        };
        /** @description The answer to a preview. */
        PreviewView: {
            /** @description The instants, ascending, computed as the scheduler would. */
            times: string[];
        };
        /**
         * @description Whether a principal is a program or a person. Operations a security
         *     review wants a human to take (`x-person-only` in the OpenAPI document)
         *     refuse services.
         * @enum {string}
         */
        PrincipalKind: "service" | "person";
        PrincipalList: {
            items: components["schemas"]["PrincipalView"][];
            next_page_token: string | null;
        };
        /** @description A principal: who an API key acts as. */
        PrincipalView: {
            /**
             * Format: date-time
             * @description When it was created.
             */
            created_at: string;
            /** @description `service` or `person`. */
            kind: components["schemas"]["PrincipalKind"];
            /** @description Unique per organization. */
            name: string;
            /** @description What it may do. */
            role: components["schemas"]["Role"];
        };
        Problem: {
            detail?: string;
            extensions?: Record<string, never>;
            instance?: string | null;
            request_id?: string | null;
            status: number;
            title?: string;
            type: string;
        };
        /** @description The answer to a purge. */
        PurgeView: {
            /**
             * Format: int64
             * @description Tasks cancelled by the purge.
             */
            cancelled: number;
        };
        /**
         * @description A queue's settings, each optional: the body of a queue update, and the
         *     settings of a queue create. Unset fields keep their values (take the
         *     defaults on create).
         */
        QueueConfigPatch: {
            /**
             * Format: int64
             * @description Seconds a task ID stays taken after its task ended.
             */
            dedup_window_s?: number | null;
            /**
             * Format: int32
             * @description 1–1800 seconds.
             */
            dispatch_deadline_s?: number | null;
            /**
             * Format: int64
             * @description Seconds a failed task is kept after it ended (0–7776000), whatever
             *     its dedup window, so that it can be redriven.
             */
            failed_retention_s?: number | null;
            /**
             * Format: int32
             * @description Most tasks of one group running at once, across nodes (1–10000);
             *     `null` removes the limit.
             */
            group_concurrency?: number | null;
            group_order?: components["schemas"]["GroupOrder"] | null;
            header_style?: components["schemas"]["TaskHeaderStyle"] | null;
            mode?: components["schemas"]["QueueMode"] | null;
            on_failure?: components["schemas"]["CallbackSpec"] | null;
            on_success?: components["schemas"]["CallbackSpec"] | null;
            /** @description Pull queues only: completing or failing a task needs a person's key. */
            person_only?: boolean | null;
            rate_limits?: components["schemas"]["RateLimitsPatch"] | null;
            retry_config?: components["schemas"]["RetryConfigPatch"] | null;
        };
        QueueList: {
            items: components["schemas"]["QueueView"][];
            next_page_token: string | null;
        };
        /**
         * @description How a queue's tasks are worked: delivered by Idem to their targets, or
         *     claimed by workers (API.md §11). Fixed when the queue is created.
         * @enum {string}
         */
        QueueMode: "push" | "pull";
        /**
         * @description Whether a queue dispatches.
         * @enum {string}
         */
        QueueState: "running" | "paused";
        /**
         * @description A queue's statistics at the instant it was read, kept by the store with
         *     every change of a task's state rather than counted from its tasks.
         */
        QueueStatsView: {
            /**
             * Format: int64
             * @description Attempts started in the last 60 seconds.
             */
            dispatched_last_minute: number;
            /**
             * Format: int64
             * @description Groups with at least one task due now.
             */
            groups_with_due?: number;
            /**
             * Format: int64
             * @description Attempts in flight: the tasks `running` now.
             */
            in_flight: number;
            /**
             * Format: date-time
             * @description Since when the longest-waiting due task has been due (its schedule
             *     time, or the end of its backoff for a retry); null when none is due.
             */
            oldest_due_time?: string | null;
            /**
             * @description The queue's tasks per state; finished tasks count until they are
             *     swept with their dedup window.
             */
            tasks: components["schemas"]["TaskCountsView"];
        };
        /** @description A queue as the API shows it. */
        QueueView: {
            /**
             * Format: date-time
             * @description When the queue was created.
             */
            created_at: string;
            /**
             * Format: int64
             * @description How long a finished task's ID stays taken, in seconds.
             */
            dedup_window_s: number;
            /**
             * Format: int32
             * @description How long a target has to answer, in seconds.
             */
            dispatch_deadline_s: number;
            /**
             * Format: int64
             * @description How long a failed task is kept after it ended (at least its dedup
             *     window), in seconds, so that it can be redriven.
             */
            failed_retention_s: number;
            /**
             * Format: int32
             * @description Most tasks of one group running at once, across nodes; null: no
             *     limit (a FIFO queue runs one whatever it says).
             */
            group_concurrency?: number | null;
            /** @description `none` or `fifo`. */
            group_order?: components["schemas"]["GroupOrder"];
            /**
             * @description The compatibility headers of its tasks' deliveries, unless a task
             *     names its own: `idem` or `cloud_tasks`.
             */
            header_style: components["schemas"]["HeaderStyle"];
            /** @description `push` or `pull`. */
            mode?: components["schemas"]["QueueMode"];
            /** @description Unique per organization. */
            name: string;
            on_failure?: components["schemas"]["TargetView"] | null;
            on_success?: components["schemas"]["TargetView"] | null;
            /** @description Completing or failing a task needs a person (pull queues). */
            person_only?: boolean;
            /** @description Token bucket and concurrency limits. */
            rate_limits: components["schemas"]["RateLimits"];
            /** @description How failed deliveries are retried. */
            retry_config: components["schemas"]["RetryConfig"];
            /** @description `running` or `paused`. */
            state: components["schemas"]["QueueState"];
            /** @description What the queue holds and dispatches now. */
            stats: components["schemas"]["QueueStatsView"];
            /**
             * Format: date-time
             * @description When its configuration or state last changed.
             */
            updated_at: string;
        };
        /** @description Token bucket and concurrency limits of one queue. */
        RateLimits: {
            /** Format: int32 */
            max_burst_size: number;
            /** Format: int32 */
            max_concurrent_dispatches: number;
            /** Format: double */
            max_dispatches_per_second: number;
        };
        /** @description Partial [`RateLimits`]. */
        RateLimitsPatch: {
            /** Format: int32 */
            max_burst_size?: number | null;
            /** Format: int32 */
            max_concurrent_dispatches?: number | null;
            /** Format: double */
            max_dispatches_per_second?: number | null;
        };
        /** @description `POST …/tasks/{task_id}/reassign`. */
        ReassignTask: {
            attempt_id: string;
            /**
             * Format: int32
             * @description 1–3600 (default 60): the fresh lease's length.
             */
            lease_s?: number | null;
            /** @description The principal the lease goes to. */
            principal: string;
        };
        /** @description `POST /v1/queues/{queue}/tasks:redrive`: which ended tasks run again. */
        RedriveTasks: {
            /**
             * Format: date-time
             * @description Only tasks created at or after this instant.
             */
            created_after?: string | null;
            /**
             * Format: date-time
             * @description Only tasks created before this instant.
             */
            created_before?: string | null;
            /** @description Count the matching tasks (`matching`) and redrive none. */
            dry_run?: boolean;
            /**
             * Format: date-time
             * @description Only tasks that ended at or after this instant.
             */
            finished_after?: string | null;
            /**
             * Format: date-time
             * @description Only tasks that ended before this instant.
             */
            finished_before?: string | null;
            /**
             * @description Only tasks whose ID starts with it (not empty), as the task list's
             *     `id_prefix`.
             */
            id_prefix?: string | null;
            /**
             * @description `failed` (the default) or `cancelled`.
             * @enum {string|null}
             */
            state?: "failed" | "cancelled" | null;
        };
        /** @description The answer to a bulk redrive. */
        RedriveView: {
            /**
             * Format: int64
             * @description A dry run's count of the tasks a redrive would run again.
             */
            matching?: number | null;
            /**
             * Format: int64
             * @description Tasks queued again by this request: every one that matched (0 for
             *     a dry run).
             */
            redriven: number;
        };
        /** @description `POST …/tasks/{task_id}/release`. */
        ReleaseTask: {
            attempt_id: string;
        };
        /** @description The resource a key's request created or changed. */
        ResourceView: {
            id: string;
            kind: string;
        };
        /** @description How a failed delivery is retried (API.md §4, "Backoff"). */
        RetryConfig: {
            /**
             * Format: int32
             * @description Attempts in all, first included; 0 means unlimited.
             */
            max_attempts: number;
            /** Format: int64 */
            max_backoff_ms: number;
            /** Format: int32 */
            max_doublings: number;
            /**
             * Format: int64
             * @description 0 means no limit on the time since the first attempt.
             */
            max_retry_duration_s: number;
            /** Format: int64 */
            min_backoff_ms: number;
        };
        /** @description Partial [`RetryConfig`], as sent on queue create/update and task create. */
        RetryConfigPatch: {
            /** Format: int32 */
            max_attempts?: number | null;
            /** Format: int64 */
            max_backoff_ms?: number | null;
            /** Format: int32 */
            max_doublings?: number | null;
            /** Format: int64 */
            max_retry_duration_s?: number | null;
            /** Format: int64 */
            min_backoff_ms?: number | null;
        };
        /**
         * @description What a principal may do. Ordered: each role includes the ones before it.
         * @enum {string}
         */
        Role: "reader" | "writer" | "admin";
        /**
         * @description Why a run exists.
         * @enum {string}
         */
        RunKind: "scheduled" | "manual";
        RunList: {
            items: components["schemas"]["RunView"][];
            next_page_token: string | null;
        };
        /** @description One run of a job. */
        RunView: {
            /**
             * Format: int32
             * @description Attempts made so far.
             */
            attempt_count: number;
            /**
             * Format: date-time
             * @description When the run was created.
             */
            created_at: string;
            /**
             * Format: date-time
             * @description When it reached a final state.
             */
            finished_at?: string | null;
            /** @description The job's name. */
            job: string;
            /** @description `scheduled` or `manual`. */
            kind: components["schemas"]["RunKind"];
            last_attempt?: components["schemas"]["Attempt"] | null;
            /**
             * @description Lowercase hex SHA-256 of `<org>/<job>/<schedule time>`: the same on
             *     every node and retry, and the `Idempotency-Key` the target receives.
             */
            run_id: string;
            /**
             * Format: date-time
             * @description The instant it stands for (a manual run's: when it was asked for).
             */
            schedule_time: string;
            /** @description Where the run is in its life: a run is dispatched like a task. */
            state: components["schemas"]["TaskState"];
        };
        /** @description The organization's signing secrets. */
        SigningSecretsView: {
            /** @description Newest first; the newest signs, every one verifies. */
            secrets: components["schemas"]["SigningSecretView"][];
        };
        /** @description A secret Idem signs deliveries with (`whsec_…`). */
        SigningSecretView: {
            /**
             * Format: date-time
             * @description When it was created.
             */
            created_at: string;
            /** @description Its ID, used to delete it. */
            id: string;
            /** @description The secret. */
            secret: string;
        };
        /** @description The HTTP request a task or job delivers, as sent in a create request. */
        TargetSpec: {
            /** @description UTF-8 text body. */
            body?: string | null;
            /** @description Binary body, base64. */
            body_base64?: string | null;
            headers?: {
                [key: string]: string;
            };
            /** @description Any JSON value (null included), sent as application/json with its numbers as spelled */
            json?: unknown;
            method?: string | null;
            oidc?: components["schemas"]["OidcSpec"] | null;
            /**
             * @description Headers whose values are never shown again once created (beside
             *     `Authorization`, `Cookie` and `Proxy-Authorization`, which never
             *     are); deliveries still send them.
             */
            secret_headers?: string[];
            /** Format: uri */
            url: string;
        };
        /** @description A target as the API shows it, its body in the form it was given. */
        TargetView: {
            /** @description A text body. */
            body?: string | null;
            /** @description A binary body, base64. */
            body_base64?: string | null;
            /**
             * @description Headers sent as given, except that the value of a secret one
             *     (`Authorization`, `Cookie`, `Proxy-Authorization` and those named in
             *     `secret_headers`) is shown as `"<redacted>"`.
             */
            headers: {
                [key: string]: string;
            };
            /** @description Any JSON value (null included), sent as application/json with its numbers as spelled */
            json?: unknown;
            /** @description The HTTP method. */
            method: string;
            oidc?: components["schemas"]["Oidc"] | null;
            /** @description The target's own secret headers, lowercase. */
            secret_headers?: string[];
            /** @description The URL delivered to. */
            url: string;
        };
        TaskBatchResults: {
            results: {
                problem?: components["schemas"]["Problem"];
                /** @enum {integer} */
                status: 201 | 400 | 409 | 410;
                task?: components["schemas"]["TaskView"];
            }[];
        };
        /** @description Tasks per state. */
        TaskCountsView: {
            /** Format: int64 */
            cancelled: number;
            /** Format: int64 */
            failed: number;
            /**
             * Format: int64
             * @description Due, or backing off before a retry.
             */
            queued: number;
            /**
             * Format: int64
             * @description An attempt is in flight.
             */
            running: number;
            /**
             * Format: int64
             * @description Never attempted, with a schedule time still ahead.
             */
            scheduled: number;
            /** Format: int64 */
            succeeded: number;
        };
        /**
         * @description The body of a `task.succeeded` or `task.failed` delivery, to a queue's
         *     or task's callback or to an organization webhook.
         */
        TaskEvent: {
            /** @description The task's queue. */
            queue: string;
            /** @description The task as it ended, with its last attempt. */
            task: components["schemas"]["TaskView"];
            /** @description `task.succeeded` or `task.failed`. */
            type: components["schemas"]["EventType"];
        };
        /**
         * @description Which compatibility headers a task's deliveries carry besides Idem's own.
         * @enum {string}
         */
        TaskHeaderStyle: "idem" | "cloud_tasks";
        TaskList: {
            items: components["schemas"]["TaskView"][];
            next_page_token: string | null;
        };
        /**
         * @description A task's state as the API shows it.
         *
         *     The store keeps `pending` for both `scheduled` and `queued`: which one a
         *     pending task is depends on the clock, so it is decided when read.
         * @enum {string}
         */
        TaskState: "scheduled" | "queued" | "running" | "succeeded" | "failed" | "cancelled";
        /** @description A task as the API shows it. */
        TaskView: {
            /**
             * Format: int32
             * @description Attempts made so far.
             */
            attempt_count: number;
            /**
             * Format: date-time
             * @description When it was created.
             */
            created_at: string;
            /**
             * Format: int32
             * @description How long the target has to answer, in seconds.
             */
            dispatch_deadline_s: number;
            /**
             * Format: date-time
             * @description When it reached a final state.
             */
            finished_at?: string | null;
            /** @description Its group; null when it has none. */
            group?: string | null;
            /**
             * @description The compatibility headers its deliveries carry (its own, or its
             *     queue's when it was created): `idem` or `cloud_tasks`.
             */
            header_style?: components["schemas"]["HeaderStyle"];
            last_attempt?: components["schemas"]["Attempt"] | null;
            lease?: components["schemas"]["Lease"] | null;
            on_failure?: components["schemas"]["TargetView"] | null;
            on_success?: components["schemas"]["TargetView"] | null;
            payload?: components["schemas"]["PayloadView"] | null;
            /**
             * Format: int32
             * @description Higher runs first within its group.
             */
            priority?: number;
            /** @description The queue's name. */
            queue: string;
            /** @description A pull queue's task: what its worker reported on completing it. */
            result?: unknown;
            /** @description How failed deliveries are retried. */
            retry_config: components["schemas"]["RetryConfig"];
            /**
             * Format: date-time
             * @description When it is (or was) due.
             */
            schedule_time: string;
            /** @description Where the task is in its life. */
            state: components["schemas"]["TaskState"];
            /** @description A pull queue's task: its tag. */
            tag?: string | null;
            target?: components["schemas"]["TargetView"] | null;
            /** @description Unique per queue. */
            task_id: string;
        };
        /** @description `PATCH /v1/jobs/{job}`: every field optional. */
        UpdateJob: {
            /** Format: int32 */
            attempt_deadline_s?: number | null;
            catch_up?: components["schemas"]["CatchUp"] | null;
            /**
             * Format: date-time
             * @description The `updated_at` the caller last read; another value gets 409
             *     `STALE_VERSION`.
             */
            expected_updated_at?: string | null;
            header_style?: components["schemas"]["JobHeaderStyle"] | null;
            retry_config?: components["schemas"]["JobRetryConfigPatch"] | null;
            schedule?: string | null;
            target?: components["schemas"]["TargetSpec"] | null;
            /** @enum {string|null} */
            time_zone?: "Africa/Abidjan" | "Africa/Accra" | "Africa/Addis_Ababa" | "Africa/Algiers" | "Africa/Asmara" | "Africa/Asmera" | "Africa/Bamako" | "Africa/Bangui" | "Africa/Banjul" | "Africa/Bissau" | "Africa/Blantyre" | "Africa/Brazzaville" | "Africa/Bujumbura" | "Africa/Cairo" | "Africa/Casablanca" | "Africa/Ceuta" | "Africa/Conakry" | "Africa/Dakar" | "Africa/Dar_es_Salaam" | "Africa/Djibouti" | "Africa/Douala" | "Africa/El_Aaiun" | "Africa/Freetown" | "Africa/Gaborone" | "Africa/Harare" | "Africa/Johannesburg" | "Africa/Juba" | "Africa/Kampala" | "Africa/Khartoum" | "Africa/Kigali" | "Africa/Kinshasa" | "Africa/Lagos" | "Africa/Libreville" | "Africa/Lome" | "Africa/Luanda" | "Africa/Lubumbashi" | "Africa/Lusaka" | "Africa/Malabo" | "Africa/Maputo" | "Africa/Maseru" | "Africa/Mbabane" | "Africa/Mogadishu" | "Africa/Monrovia" | "Africa/Nairobi" | "Africa/Ndjamena" | "Africa/Niamey" | "Africa/Nouakchott" | "Africa/Ouagadougou" | "Africa/Porto-Novo" | "Africa/Sao_Tome" | "Africa/Timbuktu" | "Africa/Tripoli" | "Africa/Tunis" | "Africa/Windhoek" | "America/Adak" | "America/Anchorage" | "America/Anguilla" | "America/Antigua" | "America/Araguaina" | "America/Argentina/Buenos_Aires" | "America/Argentina/Catamarca" | "America/Argentina/ComodRivadavia" | "America/Argentina/Cordoba" | "America/Argentina/Jujuy" | "America/Argentina/La_Rioja" | "America/Argentina/Mendoza" | "America/Argentina/Rio_Gallegos" | "America/Argentina/Salta" | "America/Argentina/San_Juan" | "America/Argentina/San_Luis" | "America/Argentina/Tucuman" | "America/Argentina/Ushuaia" | "America/Aruba" | "America/Asuncion" | "America/Atikokan" | "America/Atka" | "America/Bahia" | "America/Bahia_Banderas" | "America/Barbados" | "America/Belem" | "America/Belize" | "America/Blanc-Sablon" | "America/Boa_Vista" | "America/Bogota" | "America/Boise" | "America/Buenos_Aires" | "America/Cambridge_Bay" | "America/Campo_Grande" | "America/Cancun" | "America/Caracas" | "America/Catamarca" | "America/Cayenne" | "America/Cayman" | "America/Chicago" | "America/Chihuahua" | "America/Ciudad_Juarez" | "America/Coral_Harbour" | "America/Cordoba" | "America/Costa_Rica" | "America/Coyhaique" | "America/Creston" | "America/Cuiaba" | "America/Curacao" | "America/Danmarkshavn" | "America/Dawson" | "America/Dawson_Creek" | "America/Denver" | "America/Detroit" | "America/Dominica" | "America/Edmonton" | "America/Eirunepe" | "America/El_Salvador" | "America/Ensenada" | "America/Fort_Nelson" | "America/Fort_Wayne" | "America/Fortaleza" | "America/Glace_Bay" | "America/Godthab" | "America/Goose_Bay" | "America/Grand_Turk" | "America/Grenada" | "America/Guadeloupe" | "America/Guatemala" | "America/Guayaquil" | "America/Guyana" | "America/Halifax" | "America/Havana" | "America/Hermosillo" | "America/Indiana/Indianapolis" | "America/Indiana/Knox" | "America/Indiana/Marengo" | "America/Indiana/Petersburg" | "America/Indiana/Tell_City" | "America/Indiana/Vevay" | "America/Indiana/Vincennes" | "America/Indiana/Winamac" | "America/Indianapolis" | "America/Inuvik" | "America/Iqaluit" | "America/Jamaica" | "America/Jujuy" | "America/Juneau" | "America/Kentucky/Louisville" | "America/Kentucky/Monticello" | "America/Knox_IN" | "America/Kralendijk" | "America/La_Paz" | "America/Lima" | "America/Los_Angeles" | "America/Louisville" | "America/Lower_Princes" | "America/Maceio" | "America/Managua" | "America/Manaus" | "America/Marigot" | "America/Martinique" | "America/Matamoros" | "America/Mazatlan" | "America/Mendoza" | "America/Menominee" | "America/Merida" | "America/Metlakatla" | "America/Mexico_City" | "America/Miquelon" | "America/Moncton" | "America/Monterrey" | "America/Montevideo" | "America/Montreal" | "America/Montserrat" | "America/Nassau" | "America/New_York" | "America/Nipigon" | "America/Nome" | "America/Noronha" | "America/North_Dakota/Beulah" | "America/North_Dakota/Center" | "America/North_Dakota/New_Salem" | "America/Nuuk" | "America/Ojinaga" | "America/Panama" | "America/Pangnirtung" | "America/Paramaribo" | "America/Phoenix" | "America/Port-au-Prince" | "America/Port_of_Spain" | "America/Porto_Acre" | "America/Porto_Velho" | "America/Puerto_Rico" | "America/Punta_Arenas" | "America/Rainy_River" | "America/Rankin_Inlet" | "America/Recife" | "America/Regina" | "America/Resolute" | "America/Rio_Branco" | "America/Rosario" | "America/Santa_Isabel" | "America/Santarem" | "America/Santiago" | "America/Santo_Domingo" | "America/Sao_Paulo" | "America/Scoresbysund" | "America/Shiprock" | "America/Sitka" | "America/St_Barthelemy" | "America/St_Johns" | "America/St_Kitts" | "America/St_Lucia" | "America/St_Thomas" | "America/St_Vincent" | "America/Swift_Current" | "America/Tegucigalpa" | "America/Thule" | "America/Thunder_Bay" | "America/Tijuana" | "America/Toronto" | "America/Tortola" | "America/Vancouver" | "America/Virgin" | "America/Whitehorse" | "America/Winnipeg" | "America/Yakutat" | "America/Yellowknife" | "Antarctica/Casey" | "Antarctica/Davis" | "Antarctica/DumontDUrville" | "Antarctica/Macquarie" | "Antarctica/Mawson" | "Antarctica/McMurdo" | "Antarctica/Palmer" | "Antarctica/Rothera" | "Antarctica/South_Pole" | "Antarctica/Syowa" | "Antarctica/Troll" | "Antarctica/Vostok" | "Arctic/Longyearbyen" | "Asia/Aden" | "Asia/Almaty" | "Asia/Amman" | "Asia/Anadyr" | "Asia/Aqtau" | "Asia/Aqtobe" | "Asia/Ashgabat" | "Asia/Ashkhabad" | "Asia/Atyrau" | "Asia/Baghdad" | "Asia/Bahrain" | "Asia/Baku" | "Asia/Bangkok" | "Asia/Barnaul" | "Asia/Beirut" | "Asia/Bishkek" | "Asia/Brunei" | "Asia/Calcutta" | "Asia/Chita" | "Asia/Choibalsan" | "Asia/Chongqing" | "Asia/Chungking" | "Asia/Colombo" | "Asia/Dacca" | "Asia/Damascus" | "Asia/Dhaka" | "Asia/Dili" | "Asia/Dubai" | "Asia/Dushanbe" | "Asia/Famagusta" | "Asia/Gaza" | "Asia/Harbin" | "Asia/Hebron" | "Asia/Ho_Chi_Minh" | "Asia/Hong_Kong" | "Asia/Hovd" | "Asia/Irkutsk" | "Asia/Istanbul" | "Asia/Jakarta" | "Asia/Jayapura" | "Asia/Jerusalem" | "Asia/Kabul" | "Asia/Kamchatka" | "Asia/Karachi" | "Asia/Kashgar" | "Asia/Kathmandu" | "Asia/Katmandu" | "Asia/Khandyga" | "Asia/Kolkata" | "Asia/Krasnoyarsk" | "Asia/Kuala_Lumpur" | "Asia/Kuching" | "Asia/Kuwait" | "Asia/Macao" | "Asia/Macau" | "Asia/Magadan" | "Asia/Makassar" | "Asia/Manila" | "Asia/Muscat" | "Asia/Nicosia" | "Asia/Novokuznetsk" | "Asia/Novosibirsk" | "Asia/Omsk" | "Asia/Oral" | "Asia/Phnom_Penh" | "Asia/Pontianak" | "Asia/Pyongyang" | "Asia/Qatar" | "Asia/Qostanay" | "Asia/Qyzylorda" | "Asia/Rangoon" | "Asia/Riyadh" | "Asia/Saigon" | "Asia/Sakhalin" | "Asia/Samarkand" | "Asia/Seoul" | "Asia/Shanghai" | "Asia/Singapore" | "Asia/Srednekolymsk" | "Asia/Taipei" | "Asia/Tashkent" | "Asia/Tbilisi" | "Asia/Tehran" | "Asia/Tel_Aviv" | "Asia/Thimbu" | "Asia/Thimphu" | "Asia/Tokyo" | "Asia/Tomsk" | "Asia/Ujung_Pandang" | "Asia/Ulaanbaatar" | "Asia/Ulan_Bator" | "Asia/Urumqi" | "Asia/Ust-Nera" | "Asia/Vientiane" | "Asia/Vladivostok" | "Asia/Yakutsk" | "Asia/Yangon" | "Asia/Yekaterinburg" | "Asia/Yerevan" | "Atlantic/Azores" | "Atlantic/Bermuda" | "Atlantic/Canary" | "Atlantic/Cape_Verde" | "Atlantic/Faeroe" | "Atlantic/Faroe" | "Atlantic/Jan_Mayen" | "Atlantic/Madeira" | "Atlantic/Reykjavik" | "Atlantic/South_Georgia" | "Atlantic/St_Helena" | "Atlantic/Stanley" | "Australia/ACT" | "Australia/Adelaide" | "Australia/Brisbane" | "Australia/Broken_Hill" | "Australia/Canberra" | "Australia/Currie" | "Australia/Darwin" | "Australia/Eucla" | "Australia/Hobart" | "Australia/LHI" | "Australia/Lindeman" | "Australia/Lord_Howe" | "Australia/Melbourne" | "Australia/NSW" | "Australia/North" | "Australia/Perth" | "Australia/Queensland" | "Australia/South" | "Australia/Sydney" | "Australia/Tasmania" | "Australia/Victoria" | "Australia/West" | "Australia/Yancowinna" | "Brazil/Acre" | "Brazil/DeNoronha" | "Brazil/East" | "Brazil/West" | "CET" | "CST6CDT" | "Canada/Atlantic" | "Canada/Central" | "Canada/Eastern" | "Canada/Mountain" | "Canada/Newfoundland" | "Canada/Pacific" | "Canada/Saskatchewan" | "Canada/Yukon" | "Chile/Continental" | "Chile/EasterIsland" | "Cuba" | "EET" | "EST" | "EST5EDT" | "Egypt" | "Eire" | "Etc/GMT" | "Etc/GMT+0" | "Etc/GMT+1" | "Etc/GMT+10" | "Etc/GMT+11" | "Etc/GMT+12" | "Etc/GMT+2" | "Etc/GMT+3" | "Etc/GMT+4" | "Etc/GMT+5" | "Etc/GMT+6" | "Etc/GMT+7" | "Etc/GMT+8" | "Etc/GMT+9" | "Etc/GMT-0" | "Etc/GMT-1" | "Etc/GMT-10" | "Etc/GMT-11" | "Etc/GMT-12" | "Etc/GMT-13" | "Etc/GMT-14" | "Etc/GMT-2" | "Etc/GMT-3" | "Etc/GMT-4" | "Etc/GMT-5" | "Etc/GMT-6" | "Etc/GMT-7" | "Etc/GMT-8" | "Etc/GMT-9" | "Etc/GMT0" | "Etc/Greenwich" | "Etc/UCT" | "Etc/UTC" | "Etc/Universal" | "Etc/Zulu" | "Europe/Amsterdam" | "Europe/Andorra" | "Europe/Astrakhan" | "Europe/Athens" | "Europe/Belfast" | "Europe/Belgrade" | "Europe/Berlin" | "Europe/Bratislava" | "Europe/Brussels" | "Europe/Bucharest" | "Europe/Budapest" | "Europe/Busingen" | "Europe/Chisinau" | "Europe/Copenhagen" | "Europe/Dublin" | "Europe/Gibraltar" | "Europe/Guernsey" | "Europe/Helsinki" | "Europe/Isle_of_Man" | "Europe/Istanbul" | "Europe/Jersey" | "Europe/Kaliningrad" | "Europe/Kiev" | "Europe/Kirov" | "Europe/Kyiv" | "Europe/Lisbon" | "Europe/Ljubljana" | "Europe/London" | "Europe/Luxembourg" | "Europe/Madrid" | "Europe/Malta" | "Europe/Mariehamn" | "Europe/Minsk" | "Europe/Monaco" | "Europe/Moscow" | "Europe/Nicosia" | "Europe/Oslo" | "Europe/Paris" | "Europe/Podgorica" | "Europe/Prague" | "Europe/Riga" | "Europe/Rome" | "Europe/Samara" | "Europe/San_Marino" | "Europe/Sarajevo" | "Europe/Saratov" | "Europe/Simferopol" | "Europe/Skopje" | "Europe/Sofia" | "Europe/Stockholm" | "Europe/Tallinn" | "Europe/Tirane" | "Europe/Tiraspol" | "Europe/Ulyanovsk" | "Europe/Uzhgorod" | "Europe/Vaduz" | "Europe/Vatican" | "Europe/Vienna" | "Europe/Vilnius" | "Europe/Volgograd" | "Europe/Warsaw" | "Europe/Zagreb" | "Europe/Zaporozhye" | "Europe/Zurich" | "Factory" | "GB" | "GB-Eire" | "GMT" | "GMT+0" | "GMT-0" | "GMT0" | "Greenwich" | "HST" | "Hongkong" | "Iceland" | "Indian/Antananarivo" | "Indian/Chagos" | "Indian/Christmas" | "Indian/Cocos" | "Indian/Comoro" | "Indian/Kerguelen" | "Indian/Mahe" | "Indian/Maldives" | "Indian/Mauritius" | "Indian/Mayotte" | "Indian/Reunion" | "Iran" | "Israel" | "Jamaica" | "Japan" | "Kwajalein" | "Libya" | "MET" | "MST" | "MST7MDT" | "Mexico/BajaNorte" | "Mexico/BajaSur" | "Mexico/General" | "NZ" | "NZ-CHAT" | "Navajo" | "PRC" | "PST8PDT" | "Pacific/Apia" | "Pacific/Auckland" | "Pacific/Bougainville" | "Pacific/Chatham" | "Pacific/Chuuk" | "Pacific/Easter" | "Pacific/Efate" | "Pacific/Enderbury" | "Pacific/Fakaofo" | "Pacific/Fiji" | "Pacific/Funafuti" | "Pacific/Galapagos" | "Pacific/Gambier" | "Pacific/Guadalcanal" | "Pacific/Guam" | "Pacific/Honolulu" | "Pacific/Johnston" | "Pacific/Kanton" | "Pacific/Kiritimati" | "Pacific/Kosrae" | "Pacific/Kwajalein" | "Pacific/Majuro" | "Pacific/Marquesas" | "Pacific/Midway" | "Pacific/Nauru" | "Pacific/Niue" | "Pacific/Norfolk" | "Pacific/Noumea" | "Pacific/Pago_Pago" | "Pacific/Palau" | "Pacific/Pitcairn" | "Pacific/Pohnpei" | "Pacific/Ponape" | "Pacific/Port_Moresby" | "Pacific/Rarotonga" | "Pacific/Saipan" | "Pacific/Samoa" | "Pacific/Tahiti" | "Pacific/Tarawa" | "Pacific/Tongatapu" | "Pacific/Truk" | "Pacific/Wake" | "Pacific/Wallis" | "Pacific/Yap" | "Poland" | "Portugal" | "ROC" | "ROK" | "Singapore" | "Turkey" | "UCT" | "US/Alaska" | "US/Aleutian" | "US/Arizona" | "US/Central" | "US/East-Indiana" | "US/Eastern" | "US/Hawaii" | "US/Indiana-Starke" | "US/Michigan" | "US/Mountain" | "US/Pacific" | "US/Samoa" | "UTC" | "Universal" | "W-SU" | "WET" | "Zulu" | "localtime" | "posixrules" | null;
        };
        /** @description `PATCH /v1/principals/{name}`. */
        UpdatePrincipal: {
            /** @description The new role. */
            role: components["schemas"]["Role"];
        };
        WebhookList: {
            items: components["schemas"]["WebhookView"][];
            next_page_token: string | null;
        };
        /** @description An organization's event webhook. */
        WebhookView: {
            /**
             * Format: date-time
             * @description When it was created.
             */
            created_at: string;
            /** @description The events it receives. */
            events: components["schemas"]["EventType"][];
            /** @description Its ID, used to delete it. */
            id: string;
            /** @description Where events are delivered. */
            url: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The request's ID, also in the server's logs and in problem documents */
        "Idem-Request-Id": string;
        /** @description `true` on an answer that replays an earlier request with the same Idempotency-Key, or (pull queues' complete and fail) a holder's repeated end of an attempt that already ended so: nothing changed */
        "Idempotent-Replayed": "true";
        /** @description The path of the resource made or named */
        Location: string;
        /** @description Seconds to wait before trying again */
        "Retry-After": number;
        /** @description The scheme to authenticate with */
        "WWW-Authenticate": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getJwks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Jwks"];
                };
            };
        };
    };
    getOpenIdConfiguration: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenIdConfiguration"];
                };
            };
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "ok";
                    };
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    openapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "ready";
                    };
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getIdempotencyKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                key: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IdempotencyKeyView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listJobs: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createJob: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "report",
                 *       "schedule": "*\/5 * * * *",
                 *       "target": {
                 *         "url": "https://reports.internal/run"
                 *       },
                 *       "time_zone": "Europe/Berlin"
                 *     }
                 */
                "application/json": components["schemas"]["CreateJob"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, JOB_ALREADY_EXISTS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "JOB_ALREADY_EXISTS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No Content */
            204: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    updateJob: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdateJob"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, STALE_VERSION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "STALE_VERSION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    pauseJob: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    resumeJob: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JobView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    runJob: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listJobRuns: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path: {
                job: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getJobRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                job: string;
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RunView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listJobRunAttempts: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path: {
                job: string;
                run_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AttemptList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createOrganization: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateOrganization"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrganizationView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, ORGANIZATION_ALREADY_EXISTS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "ORGANIZATION_ALREADY_EXISTS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listPrincipals: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PrincipalList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createPrincipal: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "kind": "service",
                 *       "name": "billing-service",
                 *       "role": "writer"
                 *     }
                 */
                "application/json": components["schemas"]["CreatePrincipal"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PrincipalView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, PRINCIPAL_ALREADY_EXISTS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "PRINCIPAL_ALREADY_EXISTS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    updatePrincipal: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpdatePrincipal"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PrincipalView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewApiKeyView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No Content */
            204: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listQueues: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueueList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createQueue: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "dispatch_deadline_s": 600,
                 *       "name": "payments",
                 *       "rate_limits": {
                 *         "max_dispatches_per_second": 500
                 *       },
                 *       "retry_config": {
                 *         "max_attempts": 5
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["CreateQueue"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueueView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, QUEUE_ALREADY_EXISTS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "QUEUE_ALREADY_EXISTS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueueView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No Content */
            204: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    updateQueue: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["QueueConfigPatch"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueueView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listQueueGroups: {
        parameters: {
            query?: {
                /** @description Only groups whose name starts with it */
                id_prefix?: string;
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GroupList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    pauseQueue: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueueView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    purgeQueue: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PurgeView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    resumeQueue: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QueueView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listTasks: {
        parameters: {
            query?: {
                /** @description RFC 3339; tasks created at or after it (the list then goes by creation time) */
                created_after?: string;
                /** @description RFC 3339; tasks created before it (the list then goes by creation time) */
                created_before?: string;
                /** @description Only task IDs that start with it */
                id_prefix?: string;
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
                /** @description Only tasks in this state */
                state?: components["schemas"]["TaskState"];
            };
            header?: never;
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createTask: {
        parameters: {
            query?: {
                /** @description Wait up to this long for a final state: 200 if the task got there, 202 if not */
                wait_ms?: number;
            };
            header?: {
                /** @description The task ID, when the body names none */
                "Idem-Task-Id"?: string;
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
                /** @description The request ID; the task ID when nothing else names one and it is a valid task ID (otherwise ignored) */
                "x-fc-request-id"?: string;
                /** @description The task ID, when neither the body nor Idem-Task-Id names one (compatibility) */
                "X-Fc-Stateful-Async-Invocation-Id"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "retry_config": {
                 *         "max_attempts": 5
                 *       },
                 *       "target": {
                 *         "json": {
                 *           "amount": 100
                 *         },
                 *         "url": "https://pay.internal/charge"
                 *       },
                 *       "task_id": "payment-12345"
                 *     }
                 */
                "application/json": components["schemas"]["CreateTask"];
                "multipart/form-data": {
                    /** @description The bytes sent to the target; the part's Content-Type is sent with them */
                    body?: string;
                    task: components["schemas"]["CreateTask"];
                };
            };
        };
        responses: {
            /** @description With `wait_ms`: the task reached a final state in time */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description With `wait_ms`: the task as it is when the wait ran out */
            202: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, TASK_ALREADY_EXISTS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "TASK_ALREADY_EXISTS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createTasks: {
        parameters: {
            query?: {
                /** @description All or nothing (true) or item by item (false, when neither this nor a JSON body's `atomic` is true) */
                atomic?: boolean;
            };
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateTasks"];
                "application/x-ndjson": string;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskBatchResults"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, TASK_ALREADY_EXISTS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "TASK_ALREADY_EXISTS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    claimTasks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ClaimTasks"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClaimedTasks"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    endTasks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "ends": [
                 *         {
                 *           "attempt_id": "0193b1c4e5f67a8b9c0d1e2f3a4b5c6d-1",
                 *           "result": {
                 *             "sent": true
                 *           },
                 *           "task_id": "invoice-1"
                 *         },
                 *         {
                 *           "attempt_id": "0193b1c4e5f67a8b9c0d1e2f3a4b5c6e-1",
                 *           "error": "mail server refused",
                 *           "task_id": "invoice-2"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["EndTasks"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EndedTasks"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    redriveTasks: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RedriveTasks"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RedriveView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    cancelTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    assignTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AssignTask"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: WORK_ALREADY_CLAIMED, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "WORK_ALREADY_CLAIMED" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listTaskAttempts: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AttemptList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    claimTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ClaimTask"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: WORK_ALREADY_CLAIMED, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "WORK_ALREADY_CLAIMED" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    completeTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CompleteTask"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: LEASE_LOST, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "LEASE_LOST" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    failTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FailTask"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: LEASE_LOST, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "LEASE_LOST" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    heartbeatTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["Heartbeat"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: LEASE_LOST, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "LEASE_LOST" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    reassignTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReassignTask"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: LEASE_LOST, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "LEASE_LOST" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    redriveTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    releaseTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReleaseTask"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: LEASE_LOST, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "LEASE_LOST" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    runTask: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path: {
                queue: string;
                task_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS, FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS" | "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    previewSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "count": 3,
                 *       "schedule": "0 9 * * MON-FRI",
                 *       "time_zone": "Europe/Berlin"
                 *     }
                 */
                "application/json": components["schemas"]["PreviewRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PreviewView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listSigningSecrets: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SigningSecretsView"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getSigningSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SigningSecretView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteSigningSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No Content */
            204: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: FAILED_PRECONDITION */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "FAILED_PRECONDITION";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    rotateSigningSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SigningSecretView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED, USER_IDENTITY_REQUIRED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED" | "USER_IDENTITY_REQUIRED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description Items per page (default 50) */
                limit?: number;
                /** @description The previous page's `next_page_token` (empty: the first page): the position the page starts after */
                page_token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description A retry with the same key and request replays the first answer instead of running again (24 h) */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "events": [
                 *         "task.failed",
                 *         "job.run_failed"
                 *       ],
                 *       "url": "https://hooks.internal/idem"
                 *     }
                 */
                "application/json": components["schemas"]["CreateWebhook"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    Location: components["headers"]["Location"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT, IDEMPOTENCY_KEY_INVALID, IDEMPOTENCY_KEY_MISSING */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT" | "IDEMPOTENCY_KEY_INVALID" | "IDEMPOTENCY_KEY_MISSING";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Conflict: IDEMPOTENCY_KEY_IN_PROGRESS */
            409: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 409;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_IN_PROGRESS";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Gone: IDEMPOTENT_RESOURCE_GONE */
            410: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 410;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENT_RESOURCE_GONE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Payload Too Large: PAYLOAD_TOO_LARGE */
            413: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 413;
                        /** @enum {unknown} */
                        type?: "PAYLOAD_TOO_LARGE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unsupported Media Type: UNSUPPORTED_MEDIA_TYPE */
            415: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 415;
                        /** @enum {unknown} */
                        type?: "UNSUPPORTED_MEDIA_TYPE";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unprocessable Entity: IDEMPOTENCY_KEY_MISMATCH */
            422: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 422;
                        /** @enum {unknown} */
                        type?: "IDEMPOTENCY_KEY_MISMATCH";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Too Many Requests: RESOURCE_EXHAUSTED */
            429: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 429;
                        /** @enum {unknown} */
                        type?: "RESOURCE_EXHAUSTED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookView"];
                };
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No Content */
            204: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Bad Request: INVALID_ARGUMENT */
            400: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 400;
                        /** @enum {unknown} */
                        type?: "INVALID_ARGUMENT";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Unauthorized: UNAUTHENTICATED */
            401: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 401;
                        /** @enum {unknown} */
                        type?: "UNAUTHENTICATED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Forbidden: PERMISSION_DENIED */
            403: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 403;
                        /** @enum {unknown} */
                        type?: "PERMISSION_DENIED";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Not Found: NOT_FOUND */
            404: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 404;
                        /** @enum {unknown} */
                        type?: "NOT_FOUND";
                    } & components["schemas"]["Problem"];
                };
            };
            /** @description Service Unavailable: UNAVAILABLE */
            503: {
                headers: {
                    "Idem-Request-Id": components["headers"]["Idem-Request-Id"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": {
                        /** @constant */
                        status?: 503;
                        /** @enum {unknown} */
                        type?: "UNAVAILABLE";
                    } & components["schemas"]["Problem"];
                };
            };
        };
    };
}
