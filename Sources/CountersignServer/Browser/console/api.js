// The console's calls to its own server. The session is an HttpOnly cookie the browser sends by itself;
// changes also carry the session's CSRF token, which only a page of this origin can read.

export const unreachable = 'The server cannot be reached; nothing was changed.';

let csrfToken = null;
let whenSignedOut = () => {};

/** A refusal: the server's `error.message`, its HTTP status (0: no answer) and its `error.code`. */
export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** The session `GET`/`POST /console/session` answered; null once signed out. */
export function useSession(session) {
  csrfToken = session?.csrf_token ?? null;
}

/** What to do when the server says the session ended (a 401): show the sign-in. */
export function onSignedOut(handler) {
  whenSignedOut = handler;
}

/**
 * One request; resolves with the parsed JSON (null for 204), or the body's text with `text`.
 * `signedOutIsFine`: a 401 is the caller's to handle (the session check, the sign-in itself).
 */
export async function api(method, path, body, { signedOutIsFine = false, text = false } = {}) {
  const headers = { Accept: 'application/json' };
  const changes = method !== 'GET';
  if (changes) {
    headers['Content-Type'] = 'application/json';
    if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
    // The API reads a body declared JSON as JSON: a change that has nothing to say sends `{}`.
    if (body === undefined && method !== 'DELETE') body = {};
  }
  let reply;
  try {
    reply = await fetch(path, {
      method, headers, credentials: 'same-origin', cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(changes ? unreachable : 'The server cannot be reached.', 0, 'network_error');
  }
  const raw = await reply.text().catch(() => '');
  let json = null;
  try {
    json = raw ? JSON.parse(raw) : null;
  } catch {
    // Not JSON: judged by the status alone.
  }
  if (reply.ok) return text ? raw : json;
  if (reply.status === 401 && !signedOutIsFine) whenSignedOut();
  throw new ApiError(json?.error?.message ?? `The server answered ${reply.status}.`, reply.status, json?.error?.code ?? null);
}

/** Shows `message` as the error of the action whose results go in `slot`. */
export function showError(slot, message) {
  const error = document.createElement('p');
  error.className = 'error';
  error.dataset.error = '';
  error.textContent = message;
  slot.replaceChildren(error);
}

/** Shows that the action whose results go in `slot` worked. */
export function showDone(slot, message) {
  const done = document.createElement('p');
  done.className = 'done';
  done.textContent = message;
  slot.replaceChildren(done);
}

/**
 * Runs one action for `button`: the button is disabled until it is answered (one request per press),
 * and a refusal is shown in `slot`, beside it. Resolves true when `call` succeeded.
 */
export async function act(button, slot, call) {
  if (button.disabled) return false;
  button.disabled = true;
  slot.replaceChildren();
  try {
    await call();
    return true;
  } catch (error) {
    // A 401 has already replaced the page with the sign-in.
    if (error.status !== 401) showError(slot, error.message || 'Something went wrong.');
    return false;
  } finally {
    button.disabled = false;
    // A disabled button loses focus; a keyboard user goes on from where they were.
    if (button.isConnected && (document.activeElement === document.body || document.activeElement === null)) button.focus();
  }
}
