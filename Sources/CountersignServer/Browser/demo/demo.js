// The demo web app: sign in, or approve a payment, on the phone registered for an email. Built on the
// browser SDK only; the interaction is kept in sessionStorage so a reload while waiting resumes.
import {
  ClientResponseOptionType, ErrorCode, JourneyStepId, initialize, restoreFromSerializedState, serializeState,
  startJourney, submitClientResponse, waitForMobileApproval,
} from '/sdk/countersign.js';

const clientId = 'demo-web';
const savedStateKey = 'countersign-demo';

/** Why a journey ended, in words; keyed by the reason the journey reports. */
const reasonsInWords = {
  no_registered_devices: 'No phone is registered for this email. Register one first, for example with `countersign device register`.',
  mobile_rejected: 'The request was denied on the phone.',
  mobile_not_authenticated: 'The phone did not confirm who you are.',
  approval_data_not_signed: 'The phone did not sign these payment details.',
  invalid_approval_data: 'The payment details cannot be sent to the phone. Use letters, digits, spaces and . , _ - only.',
  otp_attempts_exceeded: 'The code was typed wrong on the phone too many times.',
  push_token_invalid: 'This phone can no longer receive requests. Register it again.',
  expired: 'The request expired before the phone answered.',
  cancelled: 'You cancelled the request.',
  approval_superseded: 'A newer sign-in for this account replaced this request.',
  resend_limit_reached: 'No more resends are allowed.',
};

const pushStatusInWords = { queued: 'Sending to your phone…', sent: 'Delivered to your phone.', failed: 'Could not reach your phone.' };

const $ = (id) => document.getElementById(id);

/** Which form started the running journey: `login` or `payment`. */
let flow = 'login';
/** The wait for the phone in progress: `{controller, promise, response}` (the step waited on). */
let waiting = null;
let countdown = null;
/** A call of the journey is under way. */
let busy = false;

// Views ---------------------------------------------------------------------------------------------

function show(view) {
  $('loading').hidden = true;
  // The time left counts down only while the waiting view is shown.
  if (view !== 'waiting') clearInterval(countdown);
  const section = $(`view-${view}`);
  const alreadyShown = !section.hidden;
  for (const other of document.querySelectorAll('main > section')) other.hidden = other !== section;
  for (const link of document.querySelectorAll('nav a')) link.removeAttribute('aria-current');
  $(`nav-${flow}`).setAttribute('aria-current', 'page');
  // Moving focus to the heading tells screen readers the page changed; updates of the same view keep focus.
  if (!alreadyShown) section.querySelector('h1').focus();
}

function showStart(which) {
  flow = which;
  forget();
  for (const id of ['login-error', 'payment-error']) $(id).textContent = '';
  show(which);
}

function showDevices(response) {
  // One button per phone: choosing one sends the request to it.
  $('device-list').replaceChildren(...response.data.devices.map((device) => {
    const button = document.createElement('button');
    Object.assign(button, { type: 'button', textContent: device.name });
    button.dataset.deviceCode = device.code;
    button.addEventListener('click', () => step($('devices-error'),
      () => submitClientResponse(ClientResponseOptionType.ClientInput, { selected_device_code: device.code })));
    return button;
  }));
  $('devices-error').textContent = response.error ? describe(response.error.code, response.error.message) : '';
  show('devices');
}

function showWaiting(response) {
  const data = response.data ?? {};
  $('otp-block').hidden = !data.otp;
  $('otp').textContent = data.otp ?? '';
  $('otp').dataset.otp = data.otp ?? '';
  // Read out digit by digit.
  $('otp').setAttribute('aria-label', data.otp ? `Code ${[...data.otp].join(' ')}` : '');
  showDetails($('waiting-details'), data.approval_data);
  $('waiting-details').hidden = !data.approval_data;
  const left = Number(data.resend_attempts_left ?? 0);
  $('resend').textContent = `Resend (${left} left)`;
  $('resend').disabled = left <= 0;
  $('push-status').textContent = pushStatusInWords[data.push_status] ?? '';
  $('waiting-error').textContent = response.error ? describe(response.error.code, response.error.message) : '';
  startCountdown(data.expires_at);
  show('waiting');
}

function showSuccess(response) {
  forget();
  const claims = decodeClaims(response.token);
  $('success-title').textContent = flow === 'payment' ? 'Payment approved' : 'Signed in';
  $('success-summary').textContent = flow === 'payment'
    ? `The phone signed this payment for ${claims.external_user_id ?? claims.sub}.`
    : `Welcome, ${claims.external_user_id ?? claims.sub}. Your phone approved ${
      claims.journey_id === 'web_add_phone' ? 'adding a phone' : 'the sign-in'}.`;
  const shown = {
    sub: claims.sub,
    user: claims.external_user_id,
    amr: (claims.amr ?? []).join(', '),
    device: claims.device_id,
    journey: claims.journey_id,
    issued: claims.iat ? new Date(claims.iat * 1000).toLocaleString() : undefined,
    expires: claims.exp ? new Date(claims.exp * 1000).toLocaleString() : undefined,
  };
  for (const [key, value] of Object.entries(claims.approval_data ?? {})) shown[`approval_data.${key}`] = value;
  showDetails($('claims'), shown);
  $('token').textContent = response.token;
  $('token').dataset.token = response.token;
  show('success');
}

function showFailure(code, message) {
  forget();
  $('failure-title').textContent = flow === 'payment' ? 'Payment not approved' : 'Not signed in';
  $('failure-reason').textContent = describe(code, message);
  $('failure-code').textContent = code ?? 'unknown';
  $('failure-code').dataset.errorCode = code ?? 'unknown';
  show('failure');
}

/** Fills a `<dl>` with the entries of `object` that have a value. */
function showDetails(list, object) {
  list.replaceChildren(...Object.entries(object ?? {}).filter(([, value]) => value !== undefined && value !== '').flatMap(([key, value]) => {
    const term = document.createElement('dt');
    term.textContent = key;
    const description = document.createElement('dd');
    description.textContent = typeof value === 'string' ? value : JSON.stringify(value);
    return [term, description];
  }));
}

function describe(code, message) {
  return reasonsInWords[code] ?? message ?? 'Something went wrong.';
}

function startCountdown(expiresAt) {
  clearInterval(countdown);
  const end = Date.parse(expiresAt);
  const tick = () => {
    const seconds = Math.max(0, Math.round((end - Date.now()) / 1000));
    $('time-left').textContent = Number.isNaN(end) ? ''
      : seconds > 0 ? `Time left: ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}.` : 'The request has expired.';
  };
  tick();
  countdown = setInterval(tick, 1000);
}

/** The token's claims, decoded for display (the page trusts its own server; a relying party verifies with the JWKS). */
function decodeClaims(token) {
  const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
  const bytes = Uint8Array.from(atob(payload.padEnd(Math.ceil(payload.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

/** The one-time code for a new phone: as text, as its link, and as the link's QR code (an SVG image from the server). */
function showEnrollmentCode(response) {
  const data = response.data ?? {};
  $('enrollment-qr').src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(data.enrollment_qr_svg ?? '')}`;
  $('enrollment-code').textContent = data.enrollment_code ?? '';
  $('enrollment-uri').textContent = data.enrollment_uri ?? '';
  $('enrollment-expires').textContent = data.expires_at ? new Date(data.expires_at).toLocaleTimeString() : '';
  show('enrollment');
}

// The journey ---------------------------------------------------------------------------------------

/** Shows the step the server answered with, and waits for the phone when that is the step. */
function render(response) {
  clearInterval(countdown);
  switch (response.journeyStepId) {
    case JourneyStepId.Success:
      return showSuccess(response);
    case JourneyStepId.Rejection:
      return showFailure(response.data?.reason ?? response.error?.code, response.error?.message);
    case JourneyStepId.MobileApproveAuthentication:
      remember();
      if (Array.isArray(response.data?.devices)) return showDevices(response);
      showWaiting(response);
      return waitForPhone(response);
    case JourneyStepId.EnrollmentCodeIssued:
      remember();
      return showEnrollmentCode(response);
    default:
      // Another step: the demo's journeys have none, so start again.
      return showStart(flow);
  }
}

function waitForPhone(response) {
  const controller = new AbortController();
  const promise = waitForMobileApproval(response, {
    signal: controller.signal,
    onUpdate: (update) => { remember(); showWaiting(update); },
    onRetry: () => { $('waiting-error').textContent = 'The connection to the server was lost. Trying again…'; },
  });
  waiting = { controller, promise, response };
  promise.then(
    (next) => { if (waiting?.controller === controller) { waiting = null; render(next); } },
    (error) => { if (waiting?.controller === controller) { waiting = null; showFailure(error.errorCode, error.message); } });
}

/**
 * Answers the waiting step with `option` (resend, cancel). The wait stops first; when the answer cannot
 * be sent, waiting resumes, so the page never shows a spinner with nothing behind it.
 */
function answerWhileWaiting(option) {
  return step($('waiting-error'), async () => {
    const waitedOn = waiting?.response;
    const ended = await stopWaiting();
    if (ended) return ended;
    try {
      return await submitClientResponse(option);
    } catch (error) {
      if (waitedOn) waitForPhone(waitedOn);
      throw error;
    }
  });
}

/** Stops waiting for the phone; resolves with the step the wait ended on, if a poll in flight ended it. */
async function stopWaiting() {
  const current = waiting;
  waiting = null;
  if (!current) return null;
  current.controller.abort();
  try {
    return await current.promise;
  } catch {
    return null;
  }
}

/** Runs one call of the journey, ignoring clicks until it is answered, then shows the answer. */
async function step(errorElement, call) {
  if (busy) return;
  busy = true;
  $('main').setAttribute('aria-busy', 'true');
  errorElement.textContent = '';
  try {
    render(await call());
  } catch (error) {
    // What can be sent again (a refused input, the network, a server's failure: a 5xx) is said on the
    // page, which stays where it was; anything else ends the journey.
    const serverFailed = error.errorCode === ErrorCode.ServerError && !(error.status < 500);
    if (serverFailed || error.errorCode === ErrorCode.ClientResponseNotValid || error.errorCode === ErrorCode.NetworkError) {
      errorElement.textContent = error.message;
    } else {
      showFailure(error.errorCode, error.message);
    }
  } finally {
    busy = false;
    $('main').removeAttribute('aria-busy');
  }
}

/** Checks the form's fields; marks the first invalid one and says what is wrong. */
function valid(form, errorElement) {
  for (const field of form.querySelectorAll('input, select')) field.removeAttribute('aria-invalid');
  const invalid = [...form.querySelectorAll('input, select')].find((field) => !field.checkValidity() || (field.required && !field.value.trim()));
  if (!invalid) return true;
  invalid.setAttribute('aria-invalid', 'true');
  const name = form.querySelector(`label[for="${invalid.id}"]`)?.textContent ?? invalid.name;
  errorElement.textContent = `Enter a valid ${name.toLowerCase()}.`;
  invalid.focus();
  return false;
}

function remember() {
  sessionStorage.setItem(savedStateKey, JSON.stringify({ flow, state: serializeState() }));
}

function forget() {
  sessionStorage.removeItem(savedStateKey);
}

// Wiring ---------------------------------------------------------------------------------------------

$('login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (!valid(form, $('login-error'))) return;
  flow = 'login';
  const email = form.email.value.trim();
  step($('login-error'), async () => {
    await startJourney(form.journey.value);
    return submitClientResponse(ClientResponseOptionType.ClientInput, { email });
  });
});

$('payment-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (!valid(form, $('payment-error'))) return;
  flow = 'payment';
  const payment = {
    email: form.email.value.trim(), amount: form.amount.value.trim(), currency: form.currency.value, payee: form.payee.value.trim(),
  };
  step($('payment-error'), async () => {
    await startJourney('web_transaction_signing');
    return submitClientResponse(ClientResponseOptionType.ClientInput, payment);
  });
});

$('devices-cancel').addEventListener('click', () => step($('devices-error'), () => submitClientResponse(ClientResponseOptionType.Cancel)));

$('enrollment-done').addEventListener('click', () => step($('enrollment-error'),
  () => submitClientResponse(ClientResponseOptionType.ClientInput, {})));
$('resend').addEventListener('click', () => answerWhileWaiting(ClientResponseOptionType.Resend));
$('cancel').addEventListener('click', () => answerWhileWaiting(ClientResponseOptionType.Cancel));

for (const button of document.querySelectorAll('.restart')) button.addEventListener('click', () => showStart(flow));

window.addEventListener('hashchange', async () => {
  await stopWaiting();
  showStart(location.hash === '#payment' ? 'payment' : 'login');
});

/** Resumes a journey saved before a reload, or shows the form the address names. */
function start() {
  initialize({ clientId, serverPath: document.querySelector('meta[name="countersign-server"]')?.content ?? '' });
  const saved = sessionStorage.getItem(savedStateKey);
  if (saved) {
    try {
      const { flow: savedFlow, state } = JSON.parse(saved);
      flow = savedFlow === 'payment' ? 'payment' : 'login';
      const last = restoreFromSerializedState(state);
      if (last) return render(last);
    } catch {
      // A saved state this page cannot read: start afresh.
    }
  }
  showStart(location.hash === '#payment' ? 'payment' : 'login');
}

start();
