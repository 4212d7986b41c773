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
  resend_limit_reached: 'No more resends are allowed.',
};

const pushStatusInWords = { queued: 'Sending to your phone…', sent: 'Delivered to your phone.', failed: 'Could not reach your phone.' };

const $ = (id) => document.getElementById(id);

/** Which form started the running journey: `login` or `payment`. */
let flow = 'login';
/** The wait for the phone in progress: `{controller, promise}`. */
let waiting = null;
let countdown = null;
/** A call of the journey is under way. */
let busy = false;

// Views ---------------------------------------------------------------------------------------------

function show(view) {
  $('loading').hidden = true;
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
  const list = $('device-list');
  list.replaceChildren(...response.data.devices.map((device, index) => {
    const label = document.createElement('label');
    label.className = 'choice';
    const input = document.createElement('input');
    Object.assign(input, { type: 'radio', name: 'device', value: device.code, checked: index === 0 });
    label.append(input, ` ${device.name}`);
    return label;
  }));
  $('devices-error').textContent = response.error ? describe(response.error.code, response.error.message) : '';
  show('devices');
}

function showWaiting(response) {
  const data = response.data ?? {};
  $('otp-block').hidden = !data.otp;
  $('otp').textContent = data.otp ?? '';
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
    : `Welcome, ${claims.external_user_id ?? claims.sub}. Your phone approved the sign-in.`;
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
  show('success');
}

function showFailure(code, message) {
  forget();
  $('failure-title').textContent = flow === 'payment' ? 'Payment not approved' : 'Not signed in';
  $('failure-reason').textContent = describe(code, message);
  $('failure-code').textContent = code ?? 'unknown';
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
    default:
      // A form again: the journey was restored before its form was sent.
      return showStart(flow);
  }
}

function waitForPhone(response) {
  const controller = new AbortController();
  const promise = waitForMobileApproval(response, {
    signal: controller.signal,
    onUpdate: (update) => { remember(); showWaiting(update); },
  });
  waiting = { controller, promise };
  promise.then(
    (next) => { if (waiting?.controller === controller) { waiting = null; render(next); } },
    (error) => { if (waiting?.controller === controller) { waiting = null; waitFailed(error, response); } });
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

function waitFailed(error, response) {
  if (error.errorCode === ErrorCode.NetworkError || error.errorCode === ErrorCode.ServerError) {
    $('waiting-error').textContent = 'The connection to the server was lost. Trying again…';
    setTimeout(() => { if (!waiting) waitForPhone(response); }, 3000);
    return;
  }
  showFailure(error.errorCode, error.message);
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
    if (error.errorCode === ErrorCode.ClientResponseNotValid || error.errorCode === ErrorCode.NetworkError) {
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

$('devices-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const code = event.currentTarget.querySelector('input[name=device]:checked')?.value;
  step($('devices-error'), () => submitClientResponse(ClientResponseOptionType.ClientInput, { selected_device_code: code }));
});

$('devices-cancel').addEventListener('click', () => step($('devices-error'), () => submitClientResponse(ClientResponseOptionType.Cancel)));

$('resend').addEventListener('click', () => step($('waiting-error'), async () => {
  return (await stopWaiting()) ?? submitClientResponse(ClientResponseOptionType.Resend);
}));

$('cancel').addEventListener('click', () => step($('waiting-error'), async () => {
  return (await stopWaiting()) ?? submitClientResponse(ClientResponseOptionType.Cancel);
}));

for (const button of document.querySelectorAll('.restart')) button.addEventListener('click', () => showStart(flow));

window.addEventListener('hashchange', async () => {
  await stopWaiting();
  showStart(location.hash === '#payment' ? 'payment' : 'login');
});

/** Resumes a journey saved before a reload, or shows the form the address names. */
function start() {
  initialize({ clientId, serverPath: location.origin });
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
