// Countersign browser SDK: runs journeys from a web page and waits for a phone's approval.
// One ES module, no dependencies. Served by the server at /sdk/countersign.js; types in countersign.d.ts.

/** The options a step offers, as `submitClientResponse` takes them. Custom branches use their own id. */
export const ClientResponseOptionType = Object.freeze({
  ClientInput: 'client_input',
  Cancel: 'cancel',
  Fail: 'failure',
  Custom: 'custom',
  Resend: 'resend',
});

/** Well-known `journeyStepId` values; forms use their own `form_id`. */
export const JourneyStepId = Object.freeze({
  Success: 'action:success',
  Rejection: 'action:rejection',
  Information: 'action:information',
  MobileApproveAuthentication: 'mobile_approve_authentication',
  OtpValidation: 'otp_validation',
  MobileBiometricsAuthentication: 'mobile_biometrics_authentication',
  MobileBiometricsTransactionSigning: 'mobile_biometrics_transaction_signing',
  EnrollmentCodeIssued: 'enrollment_code_issued',
});

/** Codes a `CountersignError` may carry besides the server's own. */
export const ErrorCode = Object.freeze({
  NetworkError: 'network_error',
  ServerError: 'server_error',
  ClientResponseNotValid: 'client_response_not_valid',
  InvalidCredentials: 'invalid_credentials',
  InvalidToken: 'invalid_token',
  SlowDown: 'slow_down',
  Expired: 'expired',
  NotInitialized: 'not_initialized',
  NoInteraction: 'no_interaction',
  InvalidState: 'invalid_state',
  Aborted: 'aborted',
});

/** A refusal or failure, with a machine-readable `errorCode`. */
export class CountersignError extends Error {
  /**
   * @param {string} errorCode one of `ErrorCode`, or the code the server sent
   * @param {string} message words for a person
   * @param {{status?: number, retryAfter?: number}} [details] HTTP status; seconds to wait for `slow_down`
   */
  constructor(errorCode, message, details = {}) {
    super(message);
    this.name = 'CountersignError';
    this.errorCode = errorCode;
    this.status = details.status;
    this.retryAfter = details.retryAfter;
  }
}

const serializedVersion = 1;

/**
 * A journey client. Most pages use the module functions, which share one default client; tests and
 * pages running two journeys at once create their own.
 */
export class CountersignClient {
  /**
   * @param {{clientId: string, serverPath?: string, fetch?: typeof fetch,
   *   sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>, storage?: Storage | null}} options
   *   `serverPath`: the server's base URL (default: this page's origin); `fetch` and `sleep` replace
   *   the platform's (tests); `storage` keeps the browser credential a sign-in approved on the phone
   *   hands out (default `localStorage`; `null` keeps none).
   */
  constructor({ clientId, serverPath = '', fetch: fetchFunction, sleep, storage } = {}) {
    if (!clientId) throw new CountersignError(ErrorCode.NotInitialized, 'initialize needs a clientId.');
    this.clientId = clientId;
    this.serverPath = serverPath.replace(/\/+$/, '');
    this.storage = storage === undefined ? localStorageIfAllowed() : storage;
    this.fetch = fetchFunction ?? globalThis.fetch.bind(globalThis);
    this.sleep = sleep ?? sleepFor;
    this.interactionId = null;
    this.interactionToken = null;
    this.lastResponse = null;
  }

  /**
   * Starts a journey.
   * @param {string} journeyId
   * @param {{additionalParams?: object, correlationId?: string, approvalData?: object}} [options]
   * @returns {Promise<IdoResponse>}
   */
  async startJourney(journeyId, { additionalParams, correlationId, approvalData } = {}) {
    const body = { client_id: this.clientId };
    if (additionalParams) body.additional_params = additionalParams;
    if (correlationId) body.correlation_id = correlationId;
    if (approvalData) body.approval_data = approvalData;
    return this.remember(await this.request('POST', `/v1/journeys/${encodeURIComponent(journeyId)}/start`, body));
  }

  /**
   * Answers the current step with one of its options (a `ClientResponseOptionType` or a custom branch id).
   * @param {string} optionId
   * @param {object} [data]
   * @returns {Promise<IdoResponse>}
   */
  async submitClientResponse(optionId, data = {}) {
    this.requireInteraction();
    const path = `/v1/interactions/${encodeURIComponent(this.interactionId)}/submit`;
    return this.remember(await this.request('POST', path, { option: optionId, data }, this.interactionToken));
  }

  /**
   * The interaction as text, to keep (e.g. in `sessionStorage`) across a page reload.
   * @returns {string}
   */
  serializeState() {
    return JSON.stringify({
      version: serializedVersion, clientId: this.clientId, serverPath: this.serverPath,
      interactionId: this.interactionId, interactionToken: this.interactionToken, lastResponse: this.lastResponse,
    });
  }

  /**
   * Resumes an interaction saved by `serializeState` for this client and server; `invalid_state` for a
   * state saved for another client or server, which would send this page's answers and the interaction's
   * token wherever the saved text points.
   * @param {string} text
   * @returns {IdoResponse | null} the last response seen before the state was saved
   */
  restoreFromSerializedState(text) {
    const saved = parseSavedState(text);
    if (saved.clientId !== this.clientId || (saved.serverPath ?? '') !== this.serverPath) {
      throw new CountersignError(ErrorCode.InvalidState, 'The saved state is for another client or server.');
    }
    this.interactionId = saved.interactionId ?? null;
    this.interactionToken = saved.interactionToken ?? null;
    this.lastResponse = saved.lastResponse ?? null;
    return this.lastResponse;
  }

  /**
   * Waits for the phone to answer a `mobile_approve_authentication` step: listens on the interaction's
   * events stream and polls every `polling_interval` seconds (never faster, longer when the server
   * says `slow_down`), calling `onUpdate` with each response that is still waiting. A poll that fails
   * for the network or the server (`network_error`, `server_error`) is tried again at the next interval
   * until the step's `expires_at`, calling `onRetry` with the error. An events stream that ends, or
   * cannot be reached (its instance lost, a proxy's timeout, a server error), is opened again an
   * interval later, with the latest token; one the server refuses for good (`403`, `404`, `410`) is left
   * to the polls.
   * Resolves with the first response that is not waiting;
   * rejects with `aborted` once `signal` is aborted (at once when it already is: nothing is sent).
   * @param {IdoResponse} response the waiting response
   * @param {{onUpdate?: (response: IdoResponse) => void, onRetry?: (error: CountersignError) => void,
   *   signal?: AbortSignal}} [options]
   * @returns {Promise<IdoResponse>}
   */
  async waitForMobileApproval(response, { onUpdate, onRetry, signal } = {}) {
    this.requireInteraction();
    if (signal?.aborted) throw new CountersignError(ErrorCode.Aborted, 'Stopped waiting for the phone.');
    const interval = Math.max(1, Number(response?.data?.polling_interval) || 3) * 1000;
    const retryUntil = Date.parse(response?.data?.expires_at);
    // Aborted by the caller's signal, or once by the events stream to poll at once.
    let wake = new AbortController();
    const stop = () => wake.abort();
    signal?.addEventListener('abort', stop, { once: true });
    const stream = new AbortController();
    this.keepListening(interval, stream.signal).then(stop, () => {});
    try {
      let wait = interval;
      for (;;) {
        await this.sleep(wait, wake.signal);
        if (signal?.aborted) throw new CountersignError(ErrorCode.Aborted, 'Stopped waiting for the phone.');
        // The stream wakes the wait once; later waits are whole intervals again.
        if (wake.signal.aborted) wake = new AbortController();
        let current;
        try {
          current = await this.submitClientResponse(ClientResponseOptionType.ClientInput, {});
        } catch (error) {
          if (error.errorCode === ErrorCode.SlowDown) {
            wait = Math.max(interval, (error.retryAfter ?? 0) * 1000);
            continue;
          }
          const transient = error.errorCode === ErrorCode.NetworkError || error.errorCode === ErrorCode.ServerError;
          if (!transient || !(Date.now() < retryUntil)) throw error;
          onRetry?.(error);
          wait = interval;
          continue;
        }
        if (current.journeyStepId !== JourneyStepId.MobileApproveAuthentication || current.error) return current;
        onUpdate?.(current);
        wait = interval;
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      stream.abort();
    }
  }

  /**
   * Resolves when an events stream reports the approval settled, opening the stream again `interval`
   * after it ends or cannot be reached. Never resolves once `signal` is aborted or the server refuses
   * the stream for good.
   */
  async keepListening(interval, signal) {
    while (!signal.aborted) {
      try {
        await this.listenForApproval(signal);
        return;
      } catch (error) {
        // Refused for good (no such interaction, or it ended); a 401 may be a token another answer had just
        // replaced, and the next try sends the latest.
        if ([403, 404, 410].includes(error.status)) break;
        await this.sleep(interval, signal);
      }
    }
    return new Promise(() => {});
  }

  /** Resolves when the events stream reports the approval settled; rejects when it cannot be read. */
  async listenForApproval(signal) {
    const url = `${this.serverPath}/v1/interactions/${encodeURIComponent(this.interactionId)}/events`;
    const reply = await this.fetch(url, {
      headers: { Authorization: `Bearer ${this.interactionToken}`, Accept: 'text/event-stream' }, signal,
    });
    if (!reply.ok || !reply.body) throw new CountersignError(ErrorCode.ServerError, 'No events stream.', { status: reply.status });
    const reader = reply.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new CountersignError(ErrorCode.NetworkError, 'The events stream ended.');
      buffered += decoder.decode(value, { stream: true });
      if (/(^|\n)event: approval\n/.test(buffered)) {
        reader.cancel().catch(() => {});
        return;
      }
    }
  }

  /** Where this client's browser credential is kept: one per server and client. */
  get credentialKey() {
    return `countersign.browser_credential ${this.serverPath} ${this.clientId}`;
  }

  async request(method, path, body, bearer) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    // The person's own browser: the server does not let other sources' requests hold it back.
    const credential = this.storage?.getItem(this.credentialKey);
    if (credential) headers['Countersign-Browser-Credential'] = credential;
    let reply;
    try {
      reply = await this.fetch(`${this.serverPath}${path}`, { method, headers, body: JSON.stringify(body) });
    } catch (error) {
      throw new CountersignError(ErrorCode.NetworkError, `The server could not be reached: ${error.message}`);
    }
    let json = null;
    try {
      json = await reply.json();
    } catch {
      // Not JSON: judged by the status below.
    }
    // A step that repeats with a refusal (400 with a whole step and a new token) is an answer too.
    if (json && (reply.ok || json.journey_step_id)) return json;
    const wireError = json?.error;
    if (reply.status >= 500 || !wireError?.code) {
      throw new CountersignError(ErrorCode.ServerError, wireError?.message ?? `The server answered ${reply.status}.`, { status: reply.status });
    }
    const retryAfter = Number(reply.headers.get('Retry-After')) || undefined;
    throw new CountersignError(wireError.code, wireError.message ?? wireError.code, { status: reply.status, retryAfter });
  }

  remember(wire) {
    let data = wire.data ?? null;
    // Kept for the next sign-in, and not handed to the page, which has no use for it.
    if (typeof data?.browser_credential === 'string') {
      this.storage?.setItem(this.credentialKey, data.browser_credential);
      data = { ...data };
      delete data.browser_credential;
    }
    const response = {
      interactionId: wire.interaction_id,
      journeyId: wire.journey_id,
      journeyStepId: wire.journey_step_id,
      data,
      clientResponseOptions: wire.client_response_options ?? {},
      token: wire.token ?? null,
      error: wire.error ?? null,
    };
    this.interactionId = wire.interaction_id ?? this.interactionId;
    this.interactionToken = wire.interaction_token ?? null;
    this.lastResponse = response;
    return response;
  }

  requireInteraction() {
    if (!this.interactionId || !this.interactionToken) {
      throw new CountersignError(ErrorCode.NoInteraction, 'No journey is running: call startJourney first.');
    }
  }
}

/** The state `serializeState` wrote; `invalid_state` when `text` is anything else. */
function parseSavedState(text) {
  let saved;
  try {
    saved = JSON.parse(text);
  } catch {
    throw new CountersignError(ErrorCode.InvalidState, 'The saved state is not valid JSON.');
  }
  if (saved?.version !== serializedVersion || typeof saved.clientId !== 'string'
    || (saved.serverPath !== undefined && typeof saved.serverPath !== 'string')) {
    throw new CountersignError(ErrorCode.InvalidState, 'The saved state is not from this SDK.');
  }
  return saved;
}

/** The page's `localStorage`, or null where there is none or reading it is refused (a sandboxed frame). */
function localStorageIfAllowed() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** Waits `milliseconds`, or less when `signal` is aborted first. */
function sleepFor(milliseconds, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, milliseconds);
    signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

let defaultClient = null;

function client() {
  if (!defaultClient) throw new CountersignError(ErrorCode.NotInitialized, 'Call initialize({clientId}) first.');
  return defaultClient;
}

/**
 * Sets up the SDK for this page.
 * @param {{clientId: string, serverPath?: string, fetch?: typeof fetch}} options as for `CountersignClient`
 */
export function initialize(options) {
  defaultClient = new CountersignClient(options);
}

/** @see CountersignClient#startJourney */
export async function startJourney(journeyId, options) {
  return client().startJourney(journeyId, options);
}

/** @see CountersignClient#submitClientResponse */
export async function submitClientResponse(optionId, data) {
  return client().submitClientResponse(optionId, data);
}

/** @see CountersignClient#serializeState */
export function serializeState() {
  return client().serializeState();
}

/**
 * Resumes a saved interaction. A page that called `initialize` resumes only a state saved for its client
 * and server. One that did not is set up for the client the saved state names, on this page's origin
 * only: a state naming another server is `invalid_state` until `initialize` names that server.
 * @see CountersignClient#restoreFromSerializedState
 */
export function restoreFromSerializedState(text) {
  const saved = parseSavedState(text);
  if (!defaultClient && saved.serverPath) {
    throw new CountersignError(ErrorCode.InvalidState, 'The saved state names a server: call initialize with it first.');
  }
  defaultClient ??= new CountersignClient({ clientId: saved.clientId });
  return defaultClient.restoreFromSerializedState(text);
}

/** @see CountersignClient#waitForMobileApproval */
export async function waitForMobileApproval(response, options) {
  return client().waitForMobileApproval(response, options);
}

/**
 * @typedef {object} IdoResponse
 * @property {string} interactionId
 * @property {string} journeyId
 * @property {string} journeyStepId a `JourneyStepId` value or a form id
 * @property {object | null} data what the step shows
 * @property {Object<string, {type: string, id: string, label: string}>} clientResponseOptions
 * @property {string | null} token the signed token, at `action:success`
 * @property {{code: string, message: string} | null} error why the step repeats or the journey ended
 */
