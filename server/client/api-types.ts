/**
 * Generated from GET /v1/openapi.json by server/client/generate.ts (npm run gen:client).
 * Do not edit: regenerate after changing a route's schema. test/cli/client-types.test.ts fails
 * when this file differs from what the current app's OpenAPI document generates.
 */
export interface paths {
    "/v1/account": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Own account id and profile */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            accountId: string;
                            description: string;
                            iconCid: string;
                            name: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/metadata": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set the profile: absent keeps, empty string clears; at least one field */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: string;
                        iconCid?: string;
                        name?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Authorization state and accounts on disk */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description base58 account public key */
                            accountId?: string;
                            /** @description wallets on disk (standalone only; empty on managed) */
                            accounts: {
                                default?: boolean;
                                /** @description base58 account public key */
                                id: string;
                            }[];
                            authorized: boolean;
                            capabilities: {
                                deauthorize: boolean;
                                shutdown: boolean;
                                switchAccount: boolean;
                            };
                            mode: "standalone" | "managed";
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create ({}), restore ({mnemonic, index?}) or select ({accountId}) an account and boot it */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description managed mode: the token printed on start */
                    "x-svc-control-token"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description standalone: select an account on disk */
                        accountId?: string;
                        /** @description derivation index, default 1 */
                        index?: number;
                        /** @description BIP39 phrase: restore */
                        mnemonic?: string;
                        /** @description managed: switch from the running account */
                        replace?: boolean;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description base58 account public key */
                            accountId: string;
                            alreadyAuthorized?: boolean;
                            /** @description this call wrote a new wallet key file */
                            created: boolean;
                            /** @description only when generated; shown once, never stored */
                            mnemonic?: string;
                        };
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description base58 account public key */
                            accountId: string;
                            alreadyAuthorized?: boolean;
                            /** @description this call wrote a new wallet key file */
                            created: boolean;
                            /** @description only when generated; shown once, never stored */
                            mnemonic?: string;
                        };
                    };
                };
            };
        };
        /** Sign out (managed only); the server stays up unauthorized */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description managed mode: the token printed on start */
                    "x-svc-control-token"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Well-known system: bundles grouped by usecase */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            usecases: {
                                bundles: {
                                    [key: string]: unknown;
                                }[];
                                /** @description usecases set up first */
                                dependsOn: string[];
                                description: string;
                                id: string;
                                name: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog/{usecaseId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One usecase */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description usecase id */
                    usecaseId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            bundles: {
                                [key: string]: unknown;
                            }[];
                            /** @description usecases set up first */
                            dependsOn: string[];
                            description: string;
                            id: string;
                            name: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog/{usecaseId}/setup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set a usecase up in a space (dependencies first; idempotent) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description usecase id */
                    usecaseId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description space to set the usecase up in */
                        spaceId: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            bundles: {
                                /** Bundle */
                                bundle: {
                                    derived: boolean;
                                    id: string;
                                    installedAt: {
                                        /** Format: date-time */
                                        $date: string;
                                    };
                                    /** @description identity that claimed the winning root */
                                    installedBy: string;
                                    /** @description losing roots still claimed; resolve or delete them */
                                    losers: string[];
                                    name: string;
                                    /** @description false while the registry names a root whose row has not arrived on this replica */
                                    ready: boolean;
                                    /** @description the winning root object */
                                    rootId: string;
                                    /** @description the type declared on the root (the root object is that type) */
                                    typeId?: string;
                                };
                                id: string;
                                installed: boolean;
                                miniapp?: string;
                                /** @description xKey to propId */
                                properties?: {
                                    [key: string]: string;
                                };
                                typeId?: string;
                                /** @description usecase the bundle belongs to */
                                usecase: string;
                            }[];
                            usecase: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/datasets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Tech-space system datasets */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            datasets: {
                                module?: string | null;
                                name: string;
                                owners?: string[];
                                /** @description JSON Schema (2020-12) with x-scope per field */
                                schema: {
                                    [key: string]: unknown;
                                };
                                shared?: boolean;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/debug/p2p": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Local-network snapshot: own peer id, listeners, LAN peers and shared spaces */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/devices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's devices */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/devices/{deviceId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One device */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description device id (its peer id) */
                    deviceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Remove another device from the account */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description device id (its peer id) */
                    deviceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Rename a device */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description device id (its peer id) */
                    deviceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/devices/query/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live device records of the account (SSE, windowed frames); GET form for EventSource: the body as the JSON of ?q= */
        get: {
            parameters: {
                query?: {
                    /** @description The POST form's JSON body, URL-encoded (absent: {}); validated by the same schema */
                    q?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        /** Live device records of the account (SSE, windowed frames) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        driftBudgetPercent?: number | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        mailboxCapacity?: number | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Publish an event (fire and forget) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description free-form JSON, at most 64 KiB marshaled */
                        data?: unknown;
                        /** @description `device`, `account` or `space` */
                        scope?: string;
                        /** @description required iff scope is space */
                        spaceId?: string;
                        /** @description `[A-Za-z0-9._-]{1,128}`: an object, run or process id */
                        target?: string;
                        /** @description dotted lowercase slug `[a-z0-9_]+(.[a-z0-9_]+)*`, at most 128 chars */
                        type?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description local subscribers matched; 0 is still success */
                            subscribers: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Events matching the filter (SSE: ready, event, closed) */
        get: {
            parameters: {
                query?: {
                    /** @description repeatable; device, account, space */
                    scope?: string[];
                    /** @description repeatable; admits space events of these spaces */
                    spaceId?: string[];
                    /** @description repeatable */
                    target?: string[];
                    /** @description repeatable; exact, or a prefix ending `.*` */
                    type?: string[];
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, event, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/cache": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Bytes of complete and partial copies, all spaces */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description bytes of complete and partial copies, all spaces */
                            size: number;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/cache/free": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** LRU reclaim of backed-up or unreferenced content, never the only copy */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        bytes: number;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            freed: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/cache/sweep": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Prune deleted files, delete unreferenced content past grace, drop stale partial fetches */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/files/exchange": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Block exchange counters since start (debug); empty without P2P */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness, version, booted account */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description booted account id; empty string while unauthorized */
                            account: string;
                            bootstrapping: boolean;
                            crdtVersion: {
                                /** @description true: written by a newer release; the server is read-only */
                                newer: boolean;
                                /** @description null while unauthorized */
                                stored: number | null;
                                supported: number;
                            };
                            startedAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            /** @enum {string} */
                            status: "ok";
                            version: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/hubs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This account's hubs, with each space's state there */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            hubs: components["schemas"]["HubRecord"][];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Add a hub by multiaddr (kept, dialled, every space registered with it) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description where the hub listens, with its peer id: /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>/p2p/<peer id> */
                        multiaddr: string;
                        /** @description an admission token the hub operator minted for this account (`svc hub admit`) */
                        token?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            addedAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            /** @description whether the hub admits this account (null until it answered) */
                            admission: "ok" | "not_admitted" | "bad_token" | "unknown" | null;
                            connected: boolean;
                            failures: number;
                            /** @description the identity the hub proved on head sync */
                            identity: string | null;
                            lastError: string | null;
                            multiaddr: string;
                            nextDialAt: {
                                /** Format: date-time */
                                $date: string;
                            } | null;
                            peerId: string;
                            source: "api" | "config";
                            spaces: {
                                lastSyncAt: {
                                    /** Format: date-time */
                                    $date: string;
                                } | null;
                                spaceId: string;
                                /** @description kept; pending (kept, its ACL not yet shown to include us); not_reader; over_spaces, over_bytes, rate_limited (quotas); released; unregistered (not answered yet) */
                                state: "kept" | "pending" | "not_reader" | "over_spaces" | "over_bytes" | "rate_limited" | "released" | "unknown" | "unregistered";
                            }[];
                            usage: {
                                bytes: number;
                                maxBytes: number;
                                maxSpaces: number;
                                spaces: number;
                            } | null;
                        };
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            addedAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            /** @description whether the hub admits this account (null until it answered) */
                            admission: "ok" | "not_admitted" | "bad_token" | "unknown" | null;
                            connected: boolean;
                            failures: number;
                            /** @description the identity the hub proved on head sync */
                            identity: string | null;
                            lastError: string | null;
                            multiaddr: string;
                            nextDialAt: {
                                /** Format: date-time */
                                $date: string;
                            } | null;
                            peerId: string;
                            source: "api" | "config";
                            spaces: {
                                lastSyncAt: {
                                    /** Format: date-time */
                                    $date: string;
                                } | null;
                                spaceId: string;
                                /** @description kept; pending (kept, its ACL not yet shown to include us); not_reader; over_spaces, over_bytes, rate_limited (quotas); released; unregistered (not answered yet) */
                                state: "kept" | "pending" | "not_reader" | "over_spaces" | "over_bytes" | "rate_limited" | "released" | "unknown" | "unregistered";
                            }[];
                            usage: {
                                bytes: number;
                                maxBytes: number;
                                maxSpaces: number;
                                spaces: number;
                            } | null;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/hubs/{peerId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Forget a hub (no more redials; it stops being a custodian of our spaces) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description the hub's libp2p peer id */
                    peerId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/identities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every identity encountered (no rights) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            identities: {
                                description?: string;
                                iconCid?: string;
                                identity: string;
                                /** @description empty until a key to read the profile arrives */
                                name?: string;
                                /** @description spaces where this identity is a member */
                                spaceIds: string[];
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/identities/{identity}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One identity of the directory */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description identity (base58 public key) */
                    identity: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            description?: string;
                            iconCid?: string;
                            identity: string;
                            /** @description empty until a key to read the profile arrives */
                            name?: string;
                            /** @description spaces where this identity is a member */
                            spaceIds: string[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/identities/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Identity directory changes (SSE) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, identities, lagged, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/peers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Peers added by address, with their connection state */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            peers: components["schemas"]["PeerRecord"][];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Add a peer by multiaddr (kept, dialled at once and redialled) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description where the peer listens, with its peer id: /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>/p2p/<peer id> */
                        multiaddr: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            addedAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            connected: boolean;
                            /** @description dials that failed since it was last connected */
                            failures: number;
                            /** @description the account it proved on the link */
                            identity: string | null;
                            lastError: string | null;
                            multiaddr: string;
                            nextDialAt: {
                                /** Format: date-time */
                                $date: string;
                            } | null;
                            peerId: string;
                            /** @description added over the API (kept) or named by the `peers` setting (this run) */
                            source: "api" | "config";
                        };
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            addedAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            connected: boolean;
                            /** @description dials that failed since it was last connected */
                            failures: number;
                            /** @description the account it proved on the link */
                            identity: string | null;
                            lastError: string | null;
                            multiaddr: string;
                            nextDialAt: {
                                /** Format: date-time */
                                $date: string;
                            } | null;
                            peerId: string;
                            /** @description added over the API (kept) or named by the `peers` setting (this run) */
                            source: "api" | "config";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/peers/{peerId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Forget an added peer (no more redials) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description libp2p peer id */
                    peerId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Long-running work (announced after 3 s) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Ask the runner of a live process to cancel (process.cancel) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description the process id (the events' `target`) */
                    processId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description local subscribers matched; 0 is still success */
                            subscribers: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/finish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** End a process this account published (process.done, .failed or .cancelled) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description the process id (the events' `target`) */
                    processId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description why it failed */
                        error?: string;
                        /** @description free-form; the event stays within 64 KiB */
                        result?: unknown;
                        /** @description the final event: process.done, process.failed or process.cancelled */
                        status: "done" | "failed" | "cancelled";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description local subscribers matched; 0 is still success */
                            subscribers: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/progress": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Report progress of a process this account published (process.progress with the full descriptor) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description the process id (the events' `target`) */
                    processId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        message?: string;
                        /** @description e.g. `{done, total}` */
                        progress?: {
                            [key: string]: number;
                        };
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description local subscribers matched; 0 is still success */
                            subscribers: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/push/subscriptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Topics this device holds at the push node, by space push key */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            subscriptions: {
                                /** @description base58 space push public key (not a space id) */
                                spaceKey: string;
                                topic: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/push/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether this device registered a push token (local state) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description ios (APNs), android (FCM); ntfy (UnifiedPush endpoint URL) and webpush (PushSubscription JSON) for self-hosters and browsers */
                            platform?: "ios" | "android" | "ntfy" | "webpush";
                            registered: boolean;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Register this device's push token */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description ios (APNs), android (FCM); ntfy (UnifiedPush endpoint URL) and webpush (PushSubscription JSON) for self-hosters and browsers */
                        platform: "ios" | "android" | "ntfy" | "webpush";
                        /** @description the device token (or endpoint) the push node forwards to */
                        token: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        /** Forget this device's push token (local delete wins) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/shutdown": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop a managed server (drains streams up to 10 s) */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description managed mode: the token printed on start */
                    "x-svc-control-token"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Spaces of the account; active only unless ?status= */
        get: {
            parameters: {
                query?: {
                    /** @description all or one status; default active */
                    status?: "all" | ("active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked");
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        }[];
                    };
                };
            };
        };
        put?: never;
        /** Create a space (owned by this account) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: string;
                        iconCid?: string;
                        /** @description display name */
                        name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One space (any status the account knows) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a space (sticky tombstone; derived spaces refuse) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        /** Name, description, icon: absent keeps, empty string clears */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: string;
                        iconCid?: string;
                        name?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/acl/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Accept a join request (the read key is wrapped to the joiner) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description identity (base58 Ed25519 public key) */
                        identity?: string;
                        /** @description join record id (MemberRecord.request.recordId) */
                        request?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            iconCid: string;
                            identity: string;
                            /** @description the join request's metadata until the member's profile is readable */
                            name: string;
                            request?: {
                                permission: string;
                                /** @description the join record: what acl/accept and acl/decline name */
                                recordId: string;
                                status: "pending" | "accepted" | "declined" | "cancelled";
                            };
                            role: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            /** @description this account */
                            self: boolean;
                            /** @description active: holds a role; pending: a join request awaiting a manager; invited: added directly, not accepted yet (own record only); declined, cancelled: a settled request; removed: role none now */
                            status: "active" | "pending" | "invited" | "declined" | "cancelled" | "removed";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/acl/add": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Put accounts on the ACL directly; each sees an invite_pending row */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        identities: string[];
                        permission: "reader" | "writer" | "admin";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            added: string[];
                            /** @description already members: their role is left as it is */
                            unchanged: string[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/acl/cancel-join": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Withdraw our pending join */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/acl/decline": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Decline a join request */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description identity (base58 Ed25519 public key) */
                        identity?: string;
                        /** @description join record id (MemberRecord.request.recordId) */
                        request?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/aggregate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Aggregate over one object's dataset */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        accumArrayLimit?: number;
                        dataset: unknown;
                        explain?: boolean;
                        groupLimit?: number;
                        memoryLimitBytes?: number;
                        objectId: unknown;
                        pipeline: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/bundles": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Installed bundles of the space */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            bundles: {
                                derived: boolean;
                                id: string;
                                installedAt: {
                                    /** Format: date-time */
                                    $date: string;
                                };
                                /** @description identity that claimed the winning root */
                                installedBy: string;
                                /** @description losing roots still claimed; resolve or delete them */
                                losers: string[];
                                name: string;
                                /** @description false while the registry names a root whose row has not arrived on this replica */
                                ready: boolean;
                                /** @description the winning root object */
                                rootId: string;
                                /** @description the type declared on the root (the root object is that type) */
                                typeId?: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Adopt-or-install a bundle (201 installed, 200 adopted) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description root id derived from (space, bundle id), the same on every device */
                        derived?: boolean;
                        hidden?: boolean;
                        /** @description `<name>/v1`; ids starting `system:` are reserved (409 bundle.reserved) */
                        id: string;
                        layout?: string;
                        name?: string;
                        /** @description part drafts of the declared type (POST {T}/parts bodies) */
                        parts?: {
                            /** @description dataset drafts, declared in the part change */
                            datasets?: unknown;
                            hidden?: unknown;
                            icon?: unknown;
                            /** @description required: [A-Za-z][A-Za-z0-9_]{0,63} */
                            key?: unknown;
                            name?: unknown;
                            pos?: unknown;
                            ui?: unknown;
                            uses?: unknown;
                        }[];
                        /** @description property drafts of the declared type (POST {T}/properties bodies) */
                        properties?: {
                            description?: unknown;
                            /** @description shorthand for xFormat.type */
                            format?: unknown;
                            /** @description kind array: {kind} of the elements (pinned) */
                            items?: unknown;
                            /** @description required: string, number, boolean, array, object, datetime */
                            kind?: unknown;
                            /** @description meta.index: props (default), a scope, or none */
                            meta?: unknown;
                            /** @description required */
                            name?: unknown;
                            /** @description kind object: {name: {kind}} (pinned) */
                            properties?: unknown;
                            /** @description synced (default), account, local */
                            scope?: unknown;
                            /** @description descriptor: type (slug), icon, pos, options, relation, config */
                            xFormat?: unknown;
                            /** @description code-side handle, unique within the type */
                            xKey?: unknown;
                        }[];
                        /** @description values by type key: core or a type of rootTypes */
                        rootProperties?: {
                            [key: string]: {
                                [key: string]: unknown;
                            };
                        };
                        /** @description types the root carries */
                        rootTypes?: string[];
                        weight?: number;
                        /** @description declares a type on the root (required with the other type fields) */
                        xKey?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Bundle */
                            bundle: {
                                derived: boolean;
                                id: string;
                                installedAt: {
                                    /** Format: date-time */
                                    $date: string;
                                };
                                /** @description identity that claimed the winning root */
                                installedBy: string;
                                /** @description losing roots still claimed; resolve or delete them */
                                losers: string[];
                                name: string;
                                /** @description false while the registry names a root whose row has not arrived on this replica */
                                ready: boolean;
                                /** @description the winning root object */
                                rootId: string;
                                /** @description the type declared on the root (the root object is that type) */
                                typeId?: string;
                            };
                            /** @description true: this call installed the root; false: an existing root was adopted */
                            installed: boolean;
                        };
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Bundle */
                            bundle: {
                                derived: boolean;
                                id: string;
                                installedAt: {
                                    /** Format: date-time */
                                    $date: string;
                                };
                                /** @description identity that claimed the winning root */
                                installedBy: string;
                                /** @description losing roots still claimed; resolve or delete them */
                                losers: string[];
                                name: string;
                                /** @description false while the registry names a root whose row has not arrived on this replica */
                                ready: boolean;
                                /** @description the winning root object */
                                rootId: string;
                                /** @description the type declared on the root (the root object is that type) */
                                typeId?: string;
                            };
                            /** @description true: this call installed the root; false: an existing root was adopted */
                            installed: boolean;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/bundles/{bundleId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One bundle */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description bundle id, URL-encoded (`notes%2Fv1`) */
                    bundleId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            derived: boolean;
                            id: string;
                            installedAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            /** @description identity that claimed the winning root */
                            installedBy: string;
                            /** @description losing roots still claimed; resolve or delete them */
                            losers: string[];
                            name: string;
                            /** @description false while the registry names a root whose row has not arrived on this replica */
                            ready: boolean;
                            /** @description the winning root object */
                            rootId: string;
                            /** @description the type declared on the root (the root object is that type) */
                            typeId?: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/bundles/{bundleId}/children": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Deterministic child of a bundle (201 created here, 200 existing) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description bundle id, URL-encoded (`notes%2Fv1`) */
                    bundleId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description the child id is derived from (space, bundle id, seed) */
                        seed: string;
                        /** @description types of a child created by this call */
                        types?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            objectId: string;
                        };
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            objectId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/bundles/{bundleId}/resolve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Release a losing root: it becomes an ordinary object */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description bundle id, URL-encoded (`notes%2Fv1`) */
                    bundleId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        loserRootId: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/datasets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Collections of the space with their schemas */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            datasets: {
                                module?: string | null;
                                name: string;
                                owners?: string[];
                                /** @description JSON Schema (2020-12) with x-scope per field */
                                schema: {
                                    [key: string]: unknown;
                                };
                                shared?: boolean;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/debug": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Per-peer head-sync counters since boot */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/debug/objects/{objectId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Joint snapshot of an object's tree and sync state */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/delete-records": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Tombstone records of one dataset */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset: string;
                        objectId?: string | null;
                        recordIds: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Files of the space (or of one object), by file id */
        get: {
            parameters: {
                query?: {
                    /** @description only files held by this object */
                    objectId?: string;
                };
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            files: {
                                attempts?: number;
                                blocks: number;
                                cached: boolean;
                                cachedBlocks: number;
                                createdAt: {
                                    /** Format: date-time */
                                    $date: string;
                                };
                                creator: string;
                                /** @description keyed root content id: equal for equal content within one space only */
                                hash: string;
                                height?: number;
                                id: string;
                                /** @description bytes in the record (files of at most 65536 bytes) */
                                inline: boolean;
                                lastErr?: string;
                                mime: string;
                                name: string;
                                objectId: string;
                                pinned: boolean;
                                size: number;
                                spaceId: string;
                                state: "durable" | "inflight" | "limited";
                                /** @description svc://f/<spaceId>/<fileId>, the link chat attachments and editor blocks carry */
                                uri: string;
                                width?: number;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/{fileId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** File info */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attempts?: number;
                            blocks: number;
                            cached: boolean;
                            cachedBlocks: number;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            creator: string;
                            /** @description keyed root content id: equal for equal content within one space only */
                            hash: string;
                            height?: number;
                            id: string;
                            /** @description bytes in the record (files of at most 65536 bytes) */
                            inline: boolean;
                            lastErr?: string;
                            mime: string;
                            name: string;
                            objectId: string;
                            pinned: boolean;
                            size: number;
                            spaceId: string;
                            state: "durable" | "inflight" | "limited";
                            /** @description svc://f/<spaceId>/<fileId>, the link chat attachments and editor blocks carry */
                            uri: string;
                            width?: number;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a file (tombstones the record; bytes go at the next sweep past grace) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/{fileId}/content": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Download: 200 whole, 206 with Range, 416 bad range; ?variant=w<width> for images */
        get: {
            parameters: {
                query?: {
                    /** @description image variant: w<width>, width in 64, 128, 256, 512, 1024, 2048; else 400 file.variant_invalid */
                    variant?: string;
                };
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/{fileId}/offload": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Drop local bytes (409 file.not_durable while they are the only copy) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/{fileId}/pin": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Keep a full local copy (background fetch, survives restarts) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/{fileId}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** File status (the body of a status frame) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attempts?: number;
                            cached: boolean;
                            fileId: string;
                            lastErr?: string;
                            objectId: string;
                            state: "durable" | "inflight" | "limited";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/{fileId}/variants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Image variants this file offers */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description file id (from `svc://f/<spaceId>/<fileId>`) */
                    fileId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            variants: string[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Counts by state, plaintext bytes, bytes stored here */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description plaintext bytes of every live file */
                            bytes: number;
                            cachedFiles: number;
                            durable: number;
                            files: number;
                            inflight: number;
                            inline: number;
                            limited: number;
                            pinned: number;
                            /** @description encrypted block bytes stored on this device for the space (shared blocks once) */
                            storedBytes: number;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/files/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** File status frames (SSE): status, lagged */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, status, lagged, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/guest-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The guest key (owner only; the same token on repeat) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            inviteToken: string;
                            spaceId: string;
                        };
                    };
                };
            };
        };
        /** Revoke the guest key: guests removed, read key rotated, old tokens dead */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/invite/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Accept a direct add (invite_pending) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/invite/decline": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Decline a direct add (synced, sticky, non-terminal) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/invites": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live invites (tokens only where minted) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            invites: {
                                /** @description only on the minting account's devices */
                                inviteToken?: string;
                                /** @description reader, writer or guest */
                                permission: string;
                                recordId: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create an invite; replaces any prior one */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description default reader */
                        permission?: "reader" | "writer";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            inviteToken: string;
                            spaceId: string;
                        };
                    };
                };
            };
        };
        /** Revoke every member invite (the guest key has its own route) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/invites/{recordId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One live invite */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description invite record id */
                    recordId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description only on the minting account's devices */
                            inviteToken?: string;
                            /** @description reader, writer or guest */
                            permission: string;
                            recordId: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Revoke one invite */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description invite record id */
                    recordId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Members and pending join requests */
        get: {
            parameters: {
                query?: {
                    /** @description also removed members and settled requests; default active and pending */
                    status?: "all";
                };
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            members: {
                                iconCid: string;
                                identity: string;
                                /** @description the join request's metadata until the member's profile is readable */
                                name: string;
                                request?: {
                                    permission: string;
                                    /** @description the join record: what acl/accept and acl/decline name */
                                    recordId: string;
                                    status: "pending" | "accepted" | "declined" | "cancelled";
                                };
                                role: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                                /** @description this account */
                                self: boolean;
                                /** @description active: holds a role; pending: a join request awaiting a manager; invited: added directly, not accepted yet (own record only); declined, cancelled: a settled request; removed: role none now */
                                status: "active" | "pending" | "invited" | "declined" | "cancelled" | "removed";
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/members/{identity}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a member; rotates the read key */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description identity (base58 Ed25519 public key) */
                    identity: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        /** Change a member's role (only the owner grants or changes admin) */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description identity (base58 Ed25519 public key) */
                    identity: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        role: "reader" | "writer" | "admin";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/members/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This account's member record (a joiner polls it) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            iconCid: string;
                            identity: string;
                            /** @description the join request's metadata until the member's profile is readable */
                            name: string;
                            request?: {
                                permission: string;
                                /** @description the join record: what acl/accept and acl/decline name */
                                recordId: string;
                                status: "pending" | "accepted" | "declined" | "cancelled";
                            };
                            role: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            /** @description this account */
                            self: boolean;
                            /** @description active: holds a role; pending: a join request awaiting a manager; invited: added directly, not accepted yet (own record only); declined, cancelled: a settled request; removed: role none now */
                            status: "active" | "pending" | "invited" | "declined" | "cancelled" | "removed";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/members/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Member changes (SSE) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, member, lagged, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/modify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Per-record ops in one change; dropped ops come back in rejections */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset: string;
                        objectId?: string | null;
                        records: {
                            id: string;
                            ops: {
                                /** @description dotted path; empty string is the whole record value */
                                path: string;
                                type: "$set" | "$unset" | "$inc" | "$addToSet" | "$pull";
                                value?: unknown;
                            }[];
                            /** @description accepted; a $set on a missing record creates it either way */
                            upsert?: boolean;
                        }[];
                        /** @description local: device-local fields only (declared scope: local), stored on this device, never synced */
                        scope?: "synced" | "local";
                        traceIds?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create an object with types and initial values */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description values grouped by type key (`core` for name, description, icon, tags; a carried type id for its properties) */
                        initialProperties?: {
                            [key: string]: {
                                [key: string]: unknown;
                            };
                        };
                        /** @description type ids the object carries for its life */
                        types?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            objectId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an object (tombstone, then its tree) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/backlinks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Objects whose relation values point here */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            backlinks: {
                                objectId: string;
                                propId: string;
                                typeId: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/chat/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a message (recordIds[0] is its id) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            /** @description text or at least one attachment (else 400 chat.text_required) */
            requestBody: {
                content: {
                    "application/json": {
                        /** @description marks an agent-authored message (a hint, not signature-verified); create-only */
                        agent?: {
                            /** @description svc://<spaceId>/<debugObjId>#<anchor>, at most 2 KiB */
                            debugLink?: string;
                            done: boolean;
                            /** @description at most 256 bytes */
                            name: string;
                        };
                        /** @description create-only; at most 32; id [A-Za-z0-9_-]{1,64} */
                        attachments?: {
                            [key: string]: {
                                /** @description svc://f/<spaceId>/<fileId>, at most 2 KiB */
                                link: string;
                                /** @description open set: link and image are known; render others as a plain link */
                                type: string;
                            };
                        };
                        /** @description stamped by the server; read-only, supplying it is 400 request.invalid_field */
                        readonly createdAt?: unknown;
                        /** @description stamped from the change envelope; read-only, supplying it is 400 request.invalid_field */
                        readonly creator?: unknown;
                        /** @description change-derived; read-only, supplying it is 400 request.invalid_field */
                        readonly id?: unknown;
                        /** @description derived from svc://m/<spaceId>/<identity> links and the replied-to creator; read-only, supplying it is 400 request.invalid_field */
                        readonly mentions?: unknown;
                        /** @description stamped by the server; read-only, supplying it is 400 request.invalid_field */
                        readonly modifiedAt?: unknown;
                        /** @description leaves written by the reactions route; read-only, supplying it is 400 request.invalid_field */
                        readonly reactions?: unknown;
                        /** @description soft reference, create-only, at most 256 bytes; not validated */
                        replyToMessageId?: string;
                        /** @description markdown, at most 32 KiB (UTF-8) */
                        text?: string;
                        /** @description read state, computed locally; read-only, supplying it is 400 request.invalid_field */
                        readonly unread?: unknown;
                        /** @description read state, computed locally; read-only, supplying it is 400 request.invalid_field */
                        readonly unreadMention?: unknown;
                        /** @description read state, computed locally; read-only, supplying it is 400 request.invalid_field */
                        readonly unreadReactions?: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/chat/messages/{msgId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete one's own message */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description message id (`recordIds[0]` of the send) */
                    msgId: string;
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Edit the text of one's own message */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description message id (`recordIds[0]` of the send) */
                    msgId: string;
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            /** @description replaces the text; modifiedAt and mentions follow */
            requestBody: {
                content: {
                    "application/json": {
                        /** @description stamped by the server; read-only, supplying it is 400 request.invalid_field */
                        readonly createdAt?: unknown;
                        /** @description stamped from the change envelope; read-only, supplying it is 400 request.invalid_field */
                        readonly creator?: unknown;
                        /** @description change-derived; read-only, supplying it is 400 request.invalid_field */
                        readonly id?: unknown;
                        /** @description derived from svc://m/<spaceId>/<identity> links and the replied-to creator; read-only, supplying it is 400 request.invalid_field */
                        readonly mentions?: unknown;
                        /** @description stamped by the server; read-only, supplying it is 400 request.invalid_field */
                        readonly modifiedAt?: unknown;
                        /** @description leaves written by the reactions route; read-only, supplying it is 400 request.invalid_field */
                        readonly reactions?: unknown;
                        /** @description markdown, at most 32 KiB (UTF-8) */
                        text: string;
                        /** @description read state, computed locally; read-only, supplying it is 400 request.invalid_field */
                        readonly unread?: unknown;
                        /** @description read state, computed locally; read-only, supplying it is 400 request.invalid_field */
                        readonly unreadMention?: unknown;
                        /** @description read state, computed locally; read-only, supplying it is 400 request.invalid_field */
                        readonly unreadReactions?: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/chat/messages/{msgId}/reactions-read": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Clear unread reactions on this message (and read the messages in the reactions' causal past) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description message id (`recordIds[0]` of the send) */
                    msgId: string;
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/chat/messages/{msgId}/reactions/{emoji}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Toggle the caller's reaction */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description the reaction, a URL-encoded path segment: 1 to 64 bytes, no dots, spaces or control characters */
                    emoji: string;
                    /** @description message id (`recordIds[0]` of the send) */
                    msgId: string;
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/chat/messages/{msgId}/read": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mark this message and every held one above it read */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description message id (`recordIds[0]` of the send) */
                    msgId: string;
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/chat/read-all": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mark every message of the chat read (this account, all its devices) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description chat root id (`bundle.rootId` of system:general-chat/v1) */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/blocks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create one block (stored as given) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description task blocks */
                        checked?: boolean;
                        nav?: {
                            depth?: number;
                            /** @description fractional position; default after the last block */
                            pos?: string;
                        };
                        /** @description table blocks; row 0 is the header */
                        rows?: string[][];
                        style?: string;
                        text?: string;
                        type: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/blocks/{blockId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete one block (children are not cascaded) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description block id */
                    blockId: string;
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Per-path set and unset on one block */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description block id */
                    blockId: string;
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description dotted path -> value */
                        set?: {
                            [key: string]: unknown;
                        };
                        /** @description extension: the text `set.text` was typed against; the edit is merged onto the text now, keeping what others typed since (docs/editor.md) */
                        textBase?: string;
                        /** @description dotted paths; `type` cannot be unset */
                        unset?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description content address of the change; the version-history handle */
                            changeId: string;
                            /** @description mirrors input order */
                            recordIds: string[];
                            /** @description ops a handler dropped */
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            /** @description local DAG order of the change on this peer */
                            versionId: string;
                        };
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/cursor": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set this device's cursor in a block (editor.cursor presence, renewed by setting it again) */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description index in the block text where the selection starts */
                        anchor: number;
                        /** @description the block the cursor is in */
                        blockId: string;
                        /** @description index where it ends (the caret); default anchor */
                        head?: number;
                        /** @description display name shown with the cursor */
                        name?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            anchor: {
                                /** @description its index in the block's text on this device; null until the text it names arrives */
                                index: number | null;
                                /** @description Yjs relative position (base64 of Y.encodeRelativePosition) */
                                rel: string;
                            };
                            blockId: string;
                            /** @description awareness client id (one per device) */
                            clientId: number;
                            collection: string;
                            head: {
                                /** @description its index in the block's text on this device; null until the text it names arrives */
                                index: number | null;
                                /** @description Yjs relative position (base64 of Y.encodeRelativePosition) */
                                rel: string;
                            };
                            /** @description account of the device (the signer of its presence) */
                            identity: string;
                            name: string;
                            objectId: string;
                            self: boolean;
                            /** @description ms since the epoch, when this device last heard it */
                            updatedAt: number;
                        };
                    };
                };
            };
        };
        post?: never;
        /** Clear this device's cursor in the object, for everyone at once */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description false when this device had no cursor in the object */
                            cleared: boolean;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/cursors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The live cursors in the object (every member device) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            cursors: {
                                anchor: {
                                    /** @description its index in the block's text on this device; null until the text it names arrives */
                                    index: number | null;
                                    /** @description Yjs relative position (base64 of Y.encodeRelativePosition) */
                                    rel: string;
                                };
                                blockId: string;
                                /** @description awareness client id (one per device) */
                                clientId: number;
                                collection: string;
                                head: {
                                    /** @description its index in the block's text on this device; null until the text it names arrives */
                                    index: number | null;
                                    /** @description Yjs relative position (base64 of Y.encodeRelativePosition) */
                                    rel: string;
                                };
                                /** @description account of the device (the signer of its presence) */
                                identity: string;
                                name: string;
                                objectId: string;
                                self: boolean;
                                /** @description ms since the epoch, when this device last heard it */
                                updatedAt: number;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/cursors/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Cursor changes in the object (SSE: ready, cursors, cursor, closed) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, cursors (the current list), cursor ({action: set|removed, cursor}), closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The editor dataset rendered as markdown */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description the rendering in normal form: text/markdown by default (spec); JSON {markdown} when Accept names application/json and not text/markdown */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description the rendering in normal form; empty document is "" */
                            markdown: string;
                        };
                        "text/markdown": string;
                    };
                };
            };
        };
        /** Replace the document: parse, diff, per-block ops in one change */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description markdown */
                        content: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            deleted: number;
                            inserted: number;
                            unchanged: number;
                            updated: number;
                        };
                    };
                };
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Exact-text edits of the rendering, all or nothing */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        edits: {
                            newText: string;
                            /** @description must occur in the current rendering exactly (once, unless replaceAll) */
                            oldText: string;
                            replaceAll?: boolean;
                        }[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            deleted: number;
                            inserted: number;
                            unchanged: number;
                            updated: number;
                        };
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown/append": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Append markdown after the last block (inserts only) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description `editor_blocks` or `<typeId>_<key>` */
                    collection: string;
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description markdown */
                        content: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            deleted: number;
                            inserted: number;
                            unchanged: number;
                            updated: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Attach a file: the body is its bytes (application/octet-stream); 413 file.too_large past the attach limit */
        post: {
            parameters: {
                query: {
                    /** @description media type; default application/octet-stream */
                    mime?: string;
                    /** @description file name shown to members */
                    name: string;
                };
                header?: never;
                path: {
                    /** @description object that holds the file record */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            changeId: string;
                            fileId: string;
                            hash: string;
                            inline: boolean;
                            objectId: string;
                            recordIds: string[];
                            size: number;
                            uri: string;
                            versionId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/files/query/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live file records of one object (SSE, windowed frames); GET form for EventSource: the body as the JSON of ?q= */
        get: {
            parameters: {
                query?: {
                    /** @description The POST form's JSON body, URL-encoded (absent: {}); validated by the same schema */
                    q?: string;
                };
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        /** Live file records of one object (SSE, windowed frames) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        driftBudgetPercent?: number | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        mailboxCapacity?: number | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An object's changes, newest first */
        get: {
            parameters: {
                query?: {
                    author?: string;
                    coalesce?: boolean;
                    /** @description milliseconds; default 60000 */
                    coalesceWindow?: number;
                    cursor?: string;
                    dataset?: string;
                    /** @description default 50; a larger value than 200 is capped at 200 */
                    limit?: number;
                    recordId?: string;
                    traceId?: string;
                };
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/history/{version}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** State of the object at a version, by dataset */
        get: {
            parameters: {
                query?: {
                    dataset?: string;
                };
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description a change id */
                    version: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/history/{version}/datasets/{dataset}/records/{recordId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One record at a version */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description dataset; @row for the object's own fields (listed as "") */
                    dataset: string;
                    /** @description object id */
                    objectId: string;
                    /** @description record id; @row for the object's own row (listed as "") */
                    recordId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description a change id */
                    version: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/history/diff": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What a version changed (against its parents or `base`) */
        get: {
            parameters: {
                query: {
                    base?: string;
                    dataset?: string;
                    /** @description comma-separated */
                    recordIds?: string;
                    version: string;
                };
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/{objectId}/types/{typeId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Attach a type after creation: not implemented (501) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        /** Detach a type: not implemented (501) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/aggregate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Aggregate over the objects of a space */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        accumArrayLimit?: number;
                        explain?: boolean;
                        groupLimit?: number;
                        memoryLimitBytes?: number;
                        /** @description array of stages (docs/api.md "Aggregate") */
                        pipeline: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create many objects in one request (all or none; each entry as POST {S}/objects) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description create bodies ({types?, initialProperties?}), at most 1000; all are created or none */
                        objects: {
                            /** @description values grouped by type key (`core` for name, description, icon, tags; a carried type id for its properties) */
                            initialProperties?: {
                                [key: string]: {
                                    [key: string]: unknown;
                                };
                            };
                            /** @description type ids the object carries for its life */
                            types?: string[];
                        }[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description the new ids, in input order */
                            objectIds: string[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Query the object rows of a space */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description with includeTotal */
                            hasNext?: boolean;
                            records: {
                                [key: string]: unknown;
                            }[];
                            /** @description with includeTotal */
                            total?: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/objects/query/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live object rows (SSE, windowed frames); GET form for EventSource: the body as the JSON of ?q= */
        get: {
            parameters: {
                query?: {
                    /** @description The POST form's JSON body, URL-encoded (absent: {}); validated by the same schema */
                    q?: string;
                };
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        /** Live object rows (SSE, windowed frames) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        driftBudgetPercent?: number | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        mailboxCapacity?: number | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/one-to-one/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Accept a pending one-to-one */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/one-to-one/decline": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Decline a one-to-one (synced to own devices; sticky until the peer starts again) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/properties/{objectId}/set/{typeKey}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set property values of one type key (routed by scope) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description core or a type id */
                    typeKey: string;
                };
                cookie?: never;
            };
            /** @description propId to value (null unsets); or {patch: {...}} */
            requestBody: {
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            changeId?: string;
                            recordIds: string[];
                            rejections?: {
                                code: string;
                                index: number;
                                reason: string;
                                recordId: string;
                            }[];
                            scoped?: {
                                account?: string[];
                                local?: string[];
                            };
                            versionId?: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Query one object's dataset */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset?: string | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        objectId?: string | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description with includeTotal */
                            hasNext?: boolean;
                            records: {
                                [key: string]: unknown;
                            }[];
                            /** @description with includeTotal */
                            total?: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/query/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live records of one object's dataset (SSE, windowed frames); GET form for EventSource: the body as the JSON of ?q= */
        get: {
            parameters: {
                query?: {
                    /** @description The POST form's JSON body, URL-encoded (absent: {}); validated by the same schema */
                    q?: string;
                };
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        /** Live records of one object's dataset (SSE, windowed frames) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset?: string | null;
                        driftBudgetPercent?: number | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        mailboxCapacity?: number | null;
                        objectId?: string | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Search the space (full-text, vector or hybrid) in the local index */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description words no hit may contain */
                        exclude?: string[];
                        /** @description hits at most (default 20) */
                        limit?: number;
                        /** @description hybrid (default), fts or vector; 400 search.bad_mode */
                        mode?: string;
                        /** @description words; every word must match, the last also as a prefix */
                        query: string;
                        /** @description words every hit must also contain */
                        require?: string[];
                        /** @description slugs ([a-z0-9_-], 1 to 64), at most 64: basic, props, editor, chat, data or a property's named scope; 400 search.bad_scope */
                        scopes?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            hits: {
                                /** @description for a record: its collection (editor_blocks, chat_messages, '<typeId>_<key>') */
                                collection?: string;
                                objectId: string;
                                /** @description for a record: the block, message or dataset record that matched */
                                recordId?: string;
                                /** @description basic, props, a named property scope, editor, chat or data */
                                scope: string;
                                /** @description higher is better; BM25 (fts), cosine (vector) or fused reciprocal rank (hybrid); comparable within one reply only */
                                score: number;
                                snippet: {
                                    /** @description [start, end) UTF-16 offsets into text of the matched words */
                                    ranges: [
                                        number,
                                        number
                                    ][];
                                    /** @description a window of the matched text */
                                    text: string;
                                };
                            }[];
                            /** @description what ran: hybrid degrades to fts without a working embedder */
                            mode: "hybrid" | "fts" | "vector";
                            vectorStatus: "ready" | "unavailable" | "disabled";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/settings": {
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
        /** Account-private settings of a space */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        set?: {
                            [key: string]: unknown;
                        };
                        unset?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** One head-sync round with reachable peers; returns when done */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/sync-status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A space's sync status */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/sync-status/objects/{objectId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An object's sync status */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/sync-status/objects/{objectId}/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One object's sync status (SSE) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description object id */
                    objectId: string;
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, status, lagged, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Types in listing order; hidden ones with includeHidden=true */
        get: {
            parameters: {
                query?: {
                    includeHidden?: boolean;
                };
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            types: {
                                description: string;
                                hidden: boolean;
                                iconCid: string;
                                id: string;
                                layout: string;
                                /** @description per-key bag */
                                meta: {
                                    [key: string]: unknown;
                                };
                                name: string;
                                weight: number;
                                xKey: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create a type (xKey required, unique) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: string;
                        hidden?: boolean;
                        iconCid?: string;
                        layout?: string;
                        /** @description per key; null unsets a key */
                        meta?: {
                            [key: string]: unknown;
                        };
                        name?: string;
                        weight?: number;
                        /** @description required (400 type.xkey_required); unique among types */
                        xKey?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            description: string;
                            hidden: boolean;
                            iconCid: string;
                            id: string;
                            layout: string;
                            /** @description per-key bag */
                            meta: {
                                [key: string]: unknown;
                            };
                            name: string;
                            weight: number;
                            xKey: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One type */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            description: string;
                            hidden: boolean;
                            iconCid: string;
                            id: string;
                            layout: string;
                            /** @description per-key bag */
                            meta: {
                                [key: string]: unknown;
                            };
                            name: string;
                            weight: number;
                            xKey: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Not implemented (501) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Change a user type (built-ins are frozen) */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: string;
                        hidden?: boolean;
                        iconCid?: string;
                        layout?: string;
                        /** @description per key; null unsets a key */
                        meta?: {
                            [key: string]: unknown;
                        };
                        name?: string;
                        weight?: number;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}/datasets/{datasetDefId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a dataset declaration */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description dataset declaration id */
                    datasetDefId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        /** Set and unset declaration paths (fields.<name> adds, changes or removes a field) */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description dataset declaration id */
                    datasetDefId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        set?: {
                            [key: string]: unknown;
                        };
                        unset?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}/parts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Parts of a type with their datasets */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            parts: {
                                datasets: {
                                    [key: string]: unknown;
                                }[];
                                hidden?: boolean;
                                icon?: string;
                                id: string;
                                key: string;
                                name?: string;
                                pos?: number;
                                typeId: string;
                                ui?: {
                                    [key: string]: unknown;
                                };
                                uses?: string[];
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Add a part and its datasets (one change) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description dataset drafts, declared in the part change */
                        datasets?: unknown;
                        hidden?: unknown;
                        icon?: unknown;
                        /** @description required: [A-Za-z][A-Za-z0-9_]{0,63} */
                        key?: unknown;
                        name?: unknown;
                        pos?: unknown;
                        ui?: unknown;
                        uses?: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            datasets: {
                                collection: string;
                                datasetDefId: string;
                            }[];
                            partId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}/parts/{partId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a part and its datasets */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description part id */
                    partId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        /** Set and unset part fields */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description part id */
                    partId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        set?: {
                            [key: string]: unknown;
                        };
                        unset?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}/parts/{partId}/datasets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Declare a dataset on a part */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description part id */
                    partId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description any (default) or author */
                        deleteBy?: unknown;
                        displayName?: unknown;
                        /** @description accept undeclared fields */
                        dynamic?: unknown;
                        /** @description {name: {type?, required?, mutableBy?, scope?, description?}} */
                        fields?: unknown;
                        /** @description idRule user: 1..256 */
                        idMaxLen?: unknown;
                        /** @description idRule user: regular expression the whole id must match */
                        idPattern?: unknown;
                        /** @description auto (default) or user */
                        idRule?: unknown;
                        /** @description default: the part key, or the module canonical key when shared */
                        key?: unknown;
                        /** @description editor or chat */
                        module?: unknown;
                        search?: unknown;
                        shared?: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            collection: string;
                            datasetDefId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}/properties": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Property definitions of a type */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            properties: {
                                description: string;
                                id: string;
                                items?: {
                                    [key: string]: unknown;
                                };
                                kind: string;
                                meta: {
                                    [key: string]: unknown;
                                };
                                name: string;
                                properties?: {
                                    [key: string]: unknown;
                                };
                                scope: string;
                                typeId: string;
                                xFormat: {
                                    [key: string]: unknown;
                                };
                                xKey?: string;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        /** Define a property (kind explicit; one change) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: unknown;
                        /** @description shorthand for xFormat.type */
                        format?: unknown;
                        /** @description kind array: {kind} of the elements (pinned) */
                        items?: unknown;
                        /** @description required: string, number, boolean, array, object, datetime */
                        kind?: unknown;
                        /** @description meta.index: props (default), a scope, or none */
                        meta?: unknown;
                        /** @description required */
                        name?: unknown;
                        /** @description kind object: {name: {kind}} (pinned) */
                        properties?: unknown;
                        /** @description synced (default), account, local */
                        scope?: unknown;
                        /** @description descriptor: type (slug), icon, pos, options, relation, config */
                        xFormat?: unknown;
                        /** @description code-side handle, unique within the type */
                        xKey?: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            propId: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/{spaceId}/types/{typeId}/properties/{propId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One property definition */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description property id */
                    propId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            description: string;
                            id: string;
                            items?: {
                                [key: string]: unknown;
                            };
                            kind: string;
                            meta: {
                                [key: string]: unknown;
                            };
                            name: string;
                            properties?: {
                                [key: string]: unknown;
                            };
                            scope: string;
                            typeId: string;
                            xFormat: {
                                [key: string]: unknown;
                            };
                            xKey?: string;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Remove a property (tombstone; values stay) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description property id */
                    propId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        options?: never;
        head?: never;
        /** Set and unset definition paths (one change) */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description property id */
                    propId: string;
                    /** @description space id */
                    spaceId: string;
                    /** @description type id */
                    typeId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        set?: {
                            [key: string]: unknown;
                        };
                        unset?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        trace?: never;
    };
    "/v1/spaces/{spaceId}/upsert": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Upsert records by caller-chosen id (idRule: user datasets) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description space id */
                    spaceId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset?: string | null;
                        objectId?: string | null;
                        /** @description records per change; default 500 */
                        pageSize?: number;
                        records: unknown[];
                        traceIds?: string[];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            created: number;
                            pages: {
                                /** @description content address of the change; the version-history handle */
                                changeId: string;
                                /** @description mirrors input order */
                                recordIds: string[];
                                /** @description ops a handler dropped */
                                rejections?: {
                                    code: string;
                                    index: number;
                                    reason: string;
                                    recordId: string;
                                }[];
                                /** @description local DAG order of the change on this peer */
                                versionId: string;
                            }[];
                            rejections: {
                                code: string;
                                id: string;
                                index: number;
                                reason: string;
                            }[];
                            skipped: number;
                            updated: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/derived": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Derived spaces by name (resolves, never creates) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            spaces: {
                                created: boolean;
                                name: string;
                                spaceId: string;
                                status?: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/derived/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create or return a derived space (idempotent) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/join": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Join with an invite or guest token (auto-detected); 409 space.exists for a space already read */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description an invite or guest token; anything malformed is 400 invite.invalid */
                        inviteToken: string;
                        /** @description seeds the joiner's displayed name and icon on the owner's side */
                        metadata?: {
                            iconCid?: string;
                            name?: string;
                        };
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/one-to-one": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a one-to-one with another account: initiate, accept what it started, or un-decline */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description the other account (base58 Ed25519 public key); not this account */
                        otherIdentity: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            author: string;
                            createdAt: {
                                /** Format: date-time */
                                $date: string;
                            };
                            derived: boolean;
                            description: string;
                            iconCid: string;
                            id: string;
                            name: string;
                            ownRole: "owner" | "admin" | "writer" | "reader" | "guest" | "none";
                            push?: {
                                encKey: string;
                                encKeyId: string;
                                spaceKey: string;
                            };
                            settings: {
                                [key: string]: string | number | boolean | null;
                            };
                            /** @description the object owning name, description and icon; empty for a row not held locally */
                            spaceIndexObjectId: string;
                            spaceType: "svc.space" | "svc.onetoone";
                            status: "active" | "joining" | "deleted" | "one_to_one_pending" | "invite_pending" | "guest_revoked";
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/one-to-one/register-incoming": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Record a one-to-one learnt out of band (idempotent): a pending row until accepted */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description what to call the peer until its profile resolves; empty string clears */
                        displayHint?: string;
                        /** @description the account that started (or will start) a one-to-one with this one */
                        peerIdentity: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description no content */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/query": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Query raw tech-space rows (dataset spaces or profile) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset?: ("spaces" | "profile") | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description with includeTotal */
                            hasNext?: boolean;
                            records: {
                                [key: string]: unknown;
                            }[];
                            /** @description with includeTotal */
                            total?: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/spaces/query/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Live tech-space rows (SSE, windowed frames); GET form for EventSource: the body as the JSON of ?q= */
        get: {
            parameters: {
                query?: {
                    /** @description The POST form's JSON body, URL-encoded (absent: {}); validated by the same schema */
                    q?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        /** Live tech-space rows (SSE, windowed frames) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        dataset?: ("spaces" | "profile") | null;
                        driftBudgetPercent?: number | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        includeTotal?: boolean | null;
                        limit?: number | null;
                        mailboxCapacity?: number | null;
                        offset?: number | null;
                        projection?: {
                            [key: string]: unknown;
                        } | null;
                        sort?: string[] | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, snapshot, changes, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sync-status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Sync status of every held space */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sync-status/peers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Per-peer sync status (not implemented: 501) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sync-status/peers/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Per-peer sync status stream (not implemented: 501) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sync-status/subscribe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Sync status of every space (SSE) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                "4XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description Default Response */
                "5XX": {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorEnvelope"];
                    };
                };
                /** @description ready, status, lagged, closed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** ErrorEnvelope */
        ErrorEnvelope: {
            error: {
                /** @description `<section>.<fault>` */
                code: string;
                details?: {
                    [key: string]: unknown;
                };
                /** @description display-safe */
                message: string;
            };
        };
        /** HubRecord */
        HubRecord: {
            addedAt: {
                /** Format: date-time */
                $date: string;
            };
            /** @description whether the hub admits this account (null until it answered) */
            admission: "ok" | "not_admitted" | "bad_token" | "unknown" | null;
            connected: boolean;
            failures: number;
            /** @description the identity the hub proved on head sync */
            identity: string | null;
            lastError: string | null;
            multiaddr: string;
            nextDialAt: {
                /** Format: date-time */
                $date: string;
            } | null;
            peerId: string;
            source: "api" | "config";
            spaces: {
                lastSyncAt: {
                    /** Format: date-time */
                    $date: string;
                } | null;
                spaceId: string;
                /** @description kept; pending (kept, its ACL not yet shown to include us); not_reader; over_spaces, over_bytes, rate_limited (quotas); released; unregistered (not answered yet) */
                state: "kept" | "pending" | "not_reader" | "over_spaces" | "over_bytes" | "rate_limited" | "released" | "unknown" | "unregistered";
            }[];
            usage: {
                bytes: number;
                maxBytes: number;
                maxSpaces: number;
                spaces: number;
            } | null;
        };
        /** PeerRecord */
        PeerRecord: {
            addedAt: {
                /** Format: date-time */
                $date: string;
            };
            connected: boolean;
            /** @description dials that failed since it was last connected */
            failures: number;
            /** @description the account it proved on the link */
            identity: string | null;
            lastError: string | null;
            multiaddr: string;
            nextDialAt: {
                /** Format: date-time */
                $date: string;
            } | null;
            peerId: string;
            /** @description added over the API (kept) or named by the `peers` setting (this run) */
            source: "api" | "config";
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
