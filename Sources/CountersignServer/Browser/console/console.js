// The operators' console: checks for a session, shows the sign-in without one, and otherwise the screen
// the address names (`#/applications`, `#/journeys/web_login`, …).
import { act, api, onSignedOut, useSession } from './api.js';
import { screens } from './screens.js';
import { showSignIn } from './signin.js';

const $ = (id) => document.getElementById(id);
const main = $('main');
let session = null;

function signedIn(opened) {
  session = opened;
  useSession(session);
  $('operator-email').textContent = session.operator.email;
  $('operator-role').textContent = session.operator.role;
  $('who').hidden = false;
  $('nav').hidden = false;
  route();
}

function signedOut(note) {
  session = null;
  useSession(null);
  $('who').hidden = true;
  $('nav').hidden = true;
  $('operator-email').textContent = '';
  $('sign-out-slot').replaceChildren();
  showSignIn(main, { note, onSignedIn: signedIn });
}

/** `text` with its %-escapes decoded; a malformed one names nothing (the screen's list is shown). */
function decoded(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** Shows the screen the address names; the first one when it names none. */
function route() {
  if (!session) return;
  const [wanted = '', ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const name = Object.hasOwn(screens, wanted) ? wanted : 'applications';
  const param = rest.length ? decoded(rest.join('/')) : null;
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // A new element per screen: answers for the screen left behind land in it, detached, and show nowhere.
  const screen = document.createElement('div');
  main.dataset.screen = name;
  main.replaceChildren(screen);
  screens[name](screen, { param, session });
  const heading = screen.querySelector('h1');
  document.title = `${heading?.textContent ?? 'Console'} — Countersign console`;
  // Moving focus to the heading tells screen readers the page changed.
  heading?.focus();
}

// The skip link names an element, not a screen: it must not change the address the screens are read from.
document.querySelector('.skip').addEventListener('click', (event) => {
  event.preventDefault();
  (main.querySelector('h1') ?? main).focus();
});

$('sign-out').addEventListener('click', (event) => act(event.currentTarget, $('sign-out-slot'), async () => {
  await api('DELETE', '/console/session');
  signedOut('You signed out.');
}));

window.addEventListener('hashchange', route);
onSignedOut(() => signedOut('Your console session ended; sign in again.'));

async function start() {
  try {
    signedIn(await api('GET', '/console/session', undefined, { signedOutIsFine: true }));
  } catch (error) {
    signedOut(error.status === 401 ? '' : error.message);
  }
}

start();
