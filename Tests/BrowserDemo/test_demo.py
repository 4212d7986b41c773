"""The demo web app in a real headless Chromium.

Every test starts `countersign serve --dev` on a free port with a fresh SQLite database, registers
`countersign device` phones against it, and drives the page at /demo with Selenium. Each test saves
screenshots (COUNTERSIGN_SCREENSHOTS, default .build/browser-screenshots).

Run: python -m unittest discover -s Tests/BrowserDemo -v   (scripts/test.sh does, after building)
"""

import json
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request
from pathlib import Path

from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

REPOSITORY = Path(__file__).resolve().parents[2]
COUNTERSIGN = os.environ.get("COUNTERSIGN_BIN", str(REPOSITORY / ".build" / "debug" / "countersign"))
SCREENSHOTS = Path(os.environ.get("COUNTERSIGN_SCREENSHOTS", REPOSITORY / ".build" / "browser-screenshots"))
WAIT_SECONDS = 20


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`countersign serve --dev` on a free port, with its database, keys and logs in `directory`, and
    `settings` added to its environment."""

    def __init__(self, directory, settings=None):
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log = open(directory / "server.log", "wb")
        environment = dict(
            os.environ,
            COUNTERSIGN_PORT=self.url.rsplit(":", 1)[1],
            COUNTERSIGN_DATABASE_URL=str(directory / "countersign.sqlite"),
            COUNTERSIGN_MASTER_KEY_FILE=str(directory / "master-key"),
            COUNTERSIGN_JOURNEYS_DIR=str(REPOSITORY / "journeys"),
            COUNTERSIGN_ADMIN_KEY="browser-tests-admin-key",
            **(settings or {}),
        )
        self.process = subprocess.Popen(
            [COUNTERSIGN, "serve", "--dev"], cwd=directory, env=environment, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/.well-known/openid-configuration", timeout=2):
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start; see {self.log.name}")
                time.sleep(0.1)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()


class Phone:
    """A `countersign device` profile registered for `email`."""

    def __init__(self, server, directory, email, name):
        self.profile = str(directory)
        registered = self.run("register", "--server", server.url, "--email", email, "--name", name)
        # "Registered device dev_… for … on …."
        self.device_id = registered.stdout.split()[2]
        self.name = name

    def run(self, *arguments, check=True):
        """Runs `countersign device …` with this profile and returns the finished process."""
        result = subprocess.run(
            [COUNTERSIGN, "device", *arguments, "--profile", self.profile],
            capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError(f"device {arguments[0]} exited {result.returncode}: {result.stdout}{result.stderr}")
        return result

    def watch(self, *arguments):
        """`countersign device watch` in the background; its output lines arrive in `.lines`."""
        return Watch([COUNTERSIGN, "device", "watch", *arguments, "--profile", self.profile])


class Watch:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.output = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        # The prompt has no newline: read what arrives, split on newlines and on the prompt's end.
        buffered = ""
        while chunk := self.process.stdout.read(1):
            buffered += chunk
            if chunk == "\n" or buffered.endswith("this wasn't me] "):
                self.output.append(buffered)
                self.lines.put(buffered.strip())
                buffered = ""

    def wait_for(self, text):
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if text in line:
                return line
        raise AssertionError(f"device watch never printed {text!r}; it printed {''.join(self.output)!r}")

    def answer(self, text):
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=20)


class DemoTestCase(unittest.TestCase):
    window = (1280, 900)
    phone_screen = None
    # Added to the server's environment.
    server_settings = None

    def setUp(self):
        self.directory = Path(tempfile.mkdtemp(prefix="countersign-browser-"))
        if not os.environ.get("COUNTERSIGN_KEEP_TEST_FILES"):
            self.addCleanup(shutil.rmtree, self.directory, ignore_errors=True)
        self.server = Server(self.directory, self.server_settings)
        self.addCleanup(self.server.stop)
        options = Options()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         f"--window-size={self.window[0]},{self.window[1]}"):
            options.add_argument(argument)
        if self.phone_screen:
            # A headless window is at least 500 px wide; emulate the phone's screen instead.
            width, height = self.phone_screen
            options.add_experimental_option(
                "mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}})
        options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
        self.browser = webdriver.Chrome(options=options, service=Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver"))
        self.addCleanup(self.browser.quit)
        self.addCleanup(self.report_page_errors)
        self.phones = 0

    # Helpers ---------------------------------------------------------------------------------------

    def phone(self, email="ada@example.com", name="Ada's phone"):
        self.phones += 1
        return Phone(self.server, self.directory / f"phone-{self.phones}", email, name)

    def open(self, page="login"):
        self.browser.get(f"{self.server.url}/demo#{page}")
        return self.visible(f"view-{page}")

    def visible(self, element_id):
        return WebDriverWait(self.browser, WAIT_SECONDS).until(
            expected_conditions.visibility_of_element_located((By.ID, element_id)))

    def text(self, element_id):
        return self.browser.find_element(By.ID, element_id).text

    def wait_for_text(self, element_id, text):
        WebDriverWait(self.browser, WAIT_SECONDS).until(
            expected_conditions.text_to_be_present_in_element((By.ID, element_id), text))

    def sign_in(self, email="ada@example.com", with_code=False):
        """Fills the login form with the keyboard only and sends it with Enter."""
        self.open("login")
        if not with_code:
            self.browser.find_element(By.CSS_SELECTOR, "input[value=web_login_biometric_only]").click()
        field = self.browser.find_element(By.ID, "login-email")
        field.send_keys(email, Keys.ENTER)

    def hook(self, selector):
        """An element by one of the stable hooks DESIGN.md names for the demo page."""
        return self.browser.find_element(By.CSS_SELECTOR, selector)

    def claims(self):
        """The token claims the success page lists, as a dict; the raw token is in `data-token`."""
        self.visible("view-success")
        self.assertEqual(len(self.hook("[data-token]").get_attribute("data-token").split(".")), 3)
        terms = self.browser.find_elements(By.CSS_SELECTOR, "#claims dt")
        values = self.browser.find_elements(By.CSS_SELECTOR, "#claims dd")
        return {term.text: value.text for term, value in zip(terms, values)}

    def verify_through_discovery(self, token):
        """Verifies `token` with joserfc, an OpenID library from outside the project, knowing only the
        server's address: the discovery document gives the issuer and `jwks_uri`, the key set the key."""
        with urllib.request.urlopen(f"{self.server.url}/.well-known/openid-configuration", timeout=5) as response:
            discovery = json.load(response)
        with urllib.request.urlopen(discovery["jwks_uri"], timeout=5) as response:
            keys = KeySet.import_key_set(json.load(response))
        verified = jwt.decode(token, keys, algorithms=discovery["id_token_signing_alg_values_supported"])
        jwt.JWTClaimsRegistry(iss={"essential": True, "value": discovery["issuer"]}, sub={"essential": True}).validate(verified.claims)
        return verified.claims

    def screenshot(self, name):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.browser.save_screenshot(str(SCREENSHOTS / f"{name}.png"))

    # HTTP statuses a test provokes on purpose; the browser logs those responses as errors too.
    expected_statuses = ()
    # Other messages a test provokes on purpose (a request the browser blocks, say).
    expected_messages = ()

    def report_page_errors(self):
        errors = [entry for entry in self.browser.get_log("browser") if entry["level"] == "SEVERE" and not (
            entry.get("source") == "network" and any(f"status of {status}" in entry["message"] for status in self.expected_statuses))
            and not any(message in entry["message"] for message in self.expected_messages)]
        self.assertEqual(errors, [], "the page logged errors")


class DemoTests(DemoTestCase):
    def test_biometric_login_reaches_the_success_page(self):
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        self.assertIn("Approve on your phone", self.text("waiting-title"))
        self.assertTrue(self.browser.find_element(By.ID, "otp-block").get_attribute("hidden"))
        self.wait_for_text("time-left", "Time left: 4:")
        self.screenshot("login-waiting")

        watch = phone.watch("--auto-approve", "--count", "1")
        self.addCleanup(watch.stop)
        claims = self.claims()
        watch.wait_for("approved")
        self.assertEqual(self.text("success-title"), "Signed in")
        self.assertEqual(claims["user"], "ada@example.com")
        self.assertEqual(claims["device"], phone.device_id)
        self.assertIn("mobile_biometrics", claims["amr"])
        self.assertTrue(claims["sub"].startswith("usr_"))
        token = self.hook("[data-token]").get_attribute("data-token")
        self.assertEqual(self.verify_through_discovery(token)["device_id"], phone.device_id)
        header, payload, signature = token.split(".")
        forged = signature[:-4] + ("AAAA" if not signature.endswith("AAAA") else "BBBB")
        with self.assertRaises(BadSignatureError):
            self.verify_through_discovery(f"{header}.{payload}.{forged}")
        self.screenshot("login-success")

    def test_otp_login_the_phone_types_the_code_the_page_shows(self):
        phone = self.phone()
        self.sign_in(with_code=True)
        code = self.visible("otp").text
        self.assertRegex(code, r"^\d{6}$")
        self.assertEqual(self.hook("[data-otp]").get_attribute("data-otp"), code)
        self.assertEqual(self.browser.find_element(By.ID, "otp").get_attribute("aria-label"), "Code " + " ".join(code))
        # What a screen reader says: the digits one by one.
        self.assertEqual(self.browser.find_element(By.ID, "otp").accessible_name, "Code " + " ".join(code))
        self.screenshot("login-otp-waiting")

        approved = phone.run("approve", "--otp", code)
        self.assertIn("approved", approved.stdout)
        claims = self.claims()
        self.assertIn("code_otp", claims["amr"])
        self.assertIn("mobile_biometrics", claims["amr"])

    def test_a_signed_in_person_adds_a_phone_by_scanning_the_code_the_page_shows(self):
        phone = self.phone()
        self.open("login")
        self.browser.find_element(By.CSS_SELECTOR, "input[value=web_add_phone]").click()
        self.browser.find_element(By.ID, "login-email").send_keys("ada@example.com", Keys.ENTER)
        phone.run("approve", "--otp", self.visible("otp").text)

        self.visible("view-enrollment")
        link = self.text("enrollment-uri")
        self.assertTrue(link.startswith(f"countersign://enroll?server={self.server.url}&client_id=demo-native&code="))
        self.assertIn(self.text("enrollment-code"), link)
        self.screenshot("add-phone-code")
        # The QR code as the page draws it, read back by a barcode reader, is the link.
        picture = self.directory / "enrollment-qr.png"
        picture.write_bytes(self.browser.find_element(By.ID, "enrollment-qr").screenshot_as_png)
        scanned = subprocess.run(["zbarimg", "--quiet", "--raw", str(picture)], capture_output=True, text=True, timeout=30)
        self.assertEqual(scanned.stdout.strip(), link)

        # The new phone enrolls with what it scanned, once.
        new_phone = ["--profile", str(self.directory / "new-phone")]
        enrolled = subprocess.run(
            [COUNTERSIGN, "device", "register", "--enrollment-uri", scanned.stdout.strip(), *new_phone],
            capture_output=True, text=True, timeout=60)
        self.assertIn("for ada@example.com", enrolled.stdout, enrolled.stderr)
        self.browser.find_element(By.ID, "enrollment-done").click()
        self.assertEqual(self.claims()["user"], "ada@example.com")
        self.assertIn("Your phone approved adding a phone.", self.text("success-summary"))

    def test_two_devices_the_person_chooses_which_phone_is_asked(self):
        work = self.phone(name="Work phone")
        home = self.phone(name="Home phone")
        self.sign_in()
        self.visible("view-devices")
        choices = self.browser.find_elements(By.CSS_SELECTOR, "#device-list button[data-device-code]")
        # Named, in the development journey this signs in with; the shipped web_login offers a browser not
        # signed in "Phone 1", "Phone 2" (WebToMobileTests.shippedWebLoginHidesNames).
        self.assertEqual(sorted(choice.text for choice in choices), ["Home phone", "Work phone"])
        self.screenshot("device-choice")

        # With the keyboard: Tab moves through the phones, Enter chooses one.
        self.browser.execute_script("arguments[0].focus()", choices[0])
        for _ in choices:
            if self.browser.switch_to.active_element.text == "Work phone":
                break
            self.browser.switch_to.active_element.send_keys(Keys.TAB)
        self.browser.switch_to.active_element.send_keys(Keys.ENTER)
        self.visible("view-waiting")
        self.assertEqual(home.run("pending", check=False).returncode, 3, "the other phone must not be asked")
        work.run("approve")
        self.assertEqual(self.claims()["device"], work.device_id)

    def test_cancel_shows_the_failure_page_and_the_phone_is_told_it_was_cancelled(self):
        phone = self.phone()
        watch = phone.watch()
        self.addCleanup(watch.stop)
        self.sign_in()
        self.visible("view-waiting")
        watch.wait_for("Approve? [y = yes")

        self.hook("[data-action=cancel]").send_keys(Keys.SPACE)
        self.visible("view-failure")
        self.assertEqual(self.text("failure-reason"), "You cancelled the request.")
        self.assertEqual(self.text("failure-code"), "cancelled")
        self.assertEqual(self.hook("[data-error-code]").get_attribute("data-error-code"), "cancelled")
        self.screenshot("cancelled")

        watch.answer("y")
        refusal = watch.wait_for("not answered")
        self.assertIn("approval_closed", refusal)
        self.assertIn("cancelled", refusal)
        # "Try again" at once meets the backoff after a request that was not approved (push fatigue).
        self.expected_statuses = (429,)
        self.browser.find_element(By.CSS_SELECTOR, "#view-failure .restart").send_keys(Keys.ENTER)
        self.visible("view-login")
        # The form keeps the email typed before.
        self.assertEqual(self.browser.find_element(By.ID, "login-email").get_attribute("value"), "ada@example.com")
        self.browser.find_element(By.ID, "login-submit").send_keys(Keys.ENTER)
        self.visible("view-failure")
        self.assertEqual(self.text("failure-code"), "rate_limited")
        self.assertIn("try again in", self.text("failure-reason"))
        # The phone keeps watching: once the backoff has passed, the next sign-in reaches it.
        time.sleep(10.5)
        self.browser.find_element(By.CSS_SELECTOR, "#view-failure .restart").send_keys(Keys.ENTER)
        self.visible("view-login")
        self.browser.find_element(By.ID, "login-submit").send_keys(Keys.ENTER)
        self.visible("view-waiting")
        watch.wait_for("Approve? [y = yes")
        watch.answer("y")
        self.claims()

    def test_resend_counts_down_and_is_disabled_at_zero(self):
        phone = self.phone()
        self.sign_in()
        self.visible("resend")
        resend = self.hook("[data-action=resend]")
        # At once after the push, a resend is refused and says how long to wait; the page keeps waiting.
        self.expected_statuses = (400,)
        resend.send_keys(Keys.ENTER)
        self.wait_for_text("waiting-error", "before sending it again")
        self.assertEqual(self.text("resend"), "Resend (3 left)")
        for left in (2, 1, 0):
            time.sleep(10.2)  # the journey's resend_interval
            resend.send_keys(Keys.ENTER)
            self.wait_for_text("resend", f"Resend ({left} left)")
        self.assertFalse(resend.is_enabled())
        self.screenshot("resend-used-up")
        # Still waiting, and the phone still gets the one request.
        self.assertEqual(len([line for line in phone.run("pending").stdout.splitlines() if "asks for approval" in line]), 1)
        phone.run("approve")
        self.claims()

    def test_deny_on_the_phone_shows_the_reason(self):
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        phone.run("deny")
        self.visible("view-failure")
        self.assertEqual(self.text("failure-reason"), "The request was denied on the phone.")
        self.assertEqual(self.text("failure-title"), "Not signed in")
        self.screenshot("denied")

    def test_payment_is_signed_on_the_phone_and_the_success_page_shows_it(self):
        phone = self.phone()
        self.open("payment")
        self.browser.find_element(By.ID, "payment-email").send_keys("ada@example.com")
        self.browser.find_element(By.ID, "payment-amount").send_keys("1000")
        Select(self.browser.find_element(By.ID, "payment-currency")).select_by_visible_text("EUR")
        self.browser.find_element(By.ID, "payment-payee").send_keys("Merchant A")
        self.screenshot("payment-form")
        self.browser.find_element(By.ID, "payment-submit").click()

        self.visible("waiting-details")
        self.assertIn("Merchant A", self.text("waiting-details"))
        self.screenshot("payment-waiting")
        approved = phone.run("approve")
        self.assertIn("payee: Merchant A", approved.stdout)
        claims = self.claims()
        self.assertEqual(self.text("success-title"), "Payment approved")
        self.assertEqual(claims["approval_data.amount"], "1000")
        self.assertEqual(claims["approval_data.currency"], "EUR")
        self.assertEqual(claims["approval_data.payee"], "Merchant A")
        self.screenshot("payment-success")

    def test_reload_while_waiting_resumes_the_same_request(self):
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        before = json.loads(json.loads(self.browser.execute_script("return sessionStorage.getItem('countersign-demo')"))["state"])
        self.browser.refresh()
        self.visible("view-waiting")
        after = json.loads(json.loads(self.browser.execute_script("return sessionStorage.getItem('countersign-demo')"))["state"])
        self.assertEqual(after["interactionId"], before["interactionId"])
        self.screenshot("reloaded-waiting")
        # No second sign-in was started: the phone has the one request, and approving it ends this page's wait.
        pending = phone.run("pending").stdout
        self.assertEqual(pending.count("asks for approval"), 1, pending)
        phone.run("approve")
        self.assertEqual(self.claims()["device"], phone.device_id)
        self.assertIsNone(self.browser.execute_script("return sessionStorage.getItem('countersign-demo')"))

    def test_a_poll_whose_answer_is_lost_goes_on_waiting_and_signs_in(self):
        # The page loses the answer to its first poll after the server has answered it, as a dropped
        # mobile connection does; the SDK polls again with the token it holds.
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.lostPolls = 0;
            window.answeredPolls = 0;
            const send = window.fetch.bind(window);
            window.fetch = async (url, init) => {
              const reply = await send(url, init);
              if (String(url).endsWith('/submit') && init?.body === '{"option":"client_input","data":{}}') {
                if (window.lostPolls === 0) {
                  window.lostPolls += 1;
                  throw new TypeError('Failed to fetch');
                }
                if (reply.ok) window.answeredPolls += 1;
              }
              return reply;
            };"""})
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        WebDriverWait(self.browser, WAIT_SECONDS).until(
            lambda browser: browser.execute_script("return window.answeredPolls") >= 1,
            "no poll was answered after the lost one")
        self.assertEqual(self.browser.execute_script("return window.lostPolls"), 1)
        self.assertTrue(self.browser.find_element(By.ID, "view-waiting").is_displayed())
        phone.run("approve")
        self.assertEqual(self.claims()["device"], phone.device_id)

    def lose_first_submit_answer(self, condition):
        """Makes the page's `fetch` drop the answer of the first submit for which the JavaScript `condition`
        (over `init` and `reply`) holds, after the server has answered it, as a dropped connection does;
        `window.lostAnswers` counts them."""
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": f"""
            window.lostAnswers = 0;
            const send = window.fetch.bind(window);
            window.fetch = async (url, init) => {{
              const reply = await send(url, init);
              if (String(url).endsWith('/submit') && window.lostAnswers === 0 && {condition}) {{
                window.lostAnswers += 1;
                throw new TypeError('Failed to fetch');
              }}
              return reply;
            }};"""})

    def test_a_sign_in_whose_last_answer_is_lost_still_signs_in(self):
        # The page loses the answer that carries the signed token, after the server has answered it; the
        # SDK polls again with the token it holds, and the server answers the same again.
        self.lose_first_submit_answer("(await reply.clone().text()).includes('\"action:success\"')")
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        phone.run("approve")
        self.assertEqual(self.claims()["device"], phone.device_id)
        self.assertEqual(self.browser.execute_script("return window.lostAnswers"), 1)

    def test_a_resend_whose_answer_is_lost_goes_on_waiting_and_signs_in(self):
        # The Resend reaches the server, which pushes again; its answer is lost on the way back. The page
        # goes back to waiting with the token it held, which the resend kept, and signs in once the phone
        # approves.
        self.lose_first_submit_answer("init?.body?.includes('\"option\":\"resend\"')")
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        time.sleep(10.2)  # the journey's resend_interval
        self.browser.find_element(By.ID, "resend").click()
        self.wait_for_text("waiting-error", "could not be reached")
        self.assertEqual(self.browser.execute_script("return window.lostAnswers"), 1)
        phone.run("approve")
        self.assertEqual(self.claims()["device"], phone.device_id)

    def test_a_cancel_whose_answer_is_lost_ends_as_cancelled(self):
        # The Cancel reaches the server and ends the run; its answer is lost on the way back. The page goes
        # back to waiting with the token it held, and its next poll is answered with the Cancel's answer.
        self.lose_first_submit_answer("init?.body?.includes('\"option\":\"cancel\"')")
        # The events stream, opened again while the page waits, is refused: the run has ended.
        self.expected_statuses = (410,)
        self.phone()
        self.sign_in()
        self.visible("view-waiting")
        self.browser.find_element(By.ID, "cancel").click()
        self.visible("view-failure")
        self.assertEqual(self.text("failure-code"), "cancelled")
        self.assertEqual(self.browser.execute_script("return window.lostAnswers"), 1)

    def answer_cancel_with(self, status, body, content_type):
        """Makes the page's Cancel meet `status` with `body` instead of reaching the server."""
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": f"""
            const send = window.fetch.bind(window);
            window.fetch = async (url, init) => {{
              if (String(url).endsWith('/submit') && init?.body?.includes('"option":"cancel"')) {{
                return new Response({json.dumps(body)}, {{ status: {status}, headers: {{ 'Content-Type': '{content_type}' }} }});
              }}
              return send(url, init);
            }};"""})

    def test_a_cancel_the_server_cannot_take_goes_back_to_waiting(self):
        # A server answering 503 (an instance restarting behind the balancer, say).
        self.answer_cancel_with(503, '{"error":{"code":"not_ready","message":"The server is not ready."}}', "application/json")
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        self.browser.find_element(By.ID, "cancel").click()
        self.wait_for_text("waiting-error", "The server is not ready.")
        self.assertTrue(self.browser.find_element(By.ID, "view-waiting").is_displayed())
        self.assertFalse(self.browser.find_element(By.ID, "view-failure").is_displayed())
        # Still waiting: the phone's approval signs the page in.
        phone.run("approve")
        self.assertEqual(self.claims()["device"], phone.device_id)

    def test_a_cancel_refused_by_something_in_between_ends_on_the_failure_page(self):
        # A proxy's own 403 page, with no error of the API's: nothing to try again.
        self.answer_cancel_with(403, "<html><body>Forbidden</body></html>", "text/html")
        self.phone()
        self.sign_in()
        self.visible("view-waiting")
        self.browser.find_element(By.ID, "cancel").click()
        self.visible("view-failure")
        self.assertEqual(self.hook("[data-error-code]").get_attribute("data-error-code"), "server_error")

    def test_invalid_email_is_refused_on_the_page_with_focus_on_the_field(self):
        self.open("login")
        field = self.browser.find_element(By.ID, "login-email")
        field.send_keys("not an email", Keys.ENTER)
        self.wait_for_text("login-error", "Enter a valid email")
        self.assertEqual(field.get_attribute("aria-invalid"), "true")
        self.assertEqual(self.browser.switch_to.active_element, field)
        self.assertTrue(self.browser.find_element(By.ID, "view-login").is_displayed(), "no journey was started")
        self.screenshot("invalid-email")

    def test_an_email_with_no_phone_gets_the_same_waiting_page(self):
        # Whether an email has a phone is not shown to whoever types it: the page waits, with a code.
        self.sign_in(email="nobody@example.com", with_code=True)
        self.visible("view-waiting")
        self.assertRegex(self.visible("otp").text, r"^\d{6}$")
        self.hook("[data-action=cancel]").send_keys(Keys.SPACE)
        self.visible("view-failure")
        self.assertEqual(self.text("failure-code"), "cancelled")

    def test_every_field_has_a_label_and_updates_are_announced(self):
        self.open("login")
        self.screenshot("login-form")
        unlabelled = self.browser.execute_script("""
            return [...document.querySelectorAll('input, select, button')]
              .filter((field) => !(field.labels?.length || field.textContent.trim() || field.getAttribute('aria-label')))
              .map((field) => field.outerHTML);""")
        self.assertEqual(unlabelled, [])
        self.assertEqual(self.browser.find_element(By.ID, "waiting-status").get_attribute("role"), "status")
        self.assertEqual(self.browser.find_element(By.ID, "login-error").get_attribute("role"), "alert")
        # While waiting, where the push stands is read out from the status region as it changes.
        self.phone()
        self.sign_in()
        self.wait_for_text("push-status", "phone")
        status = self.browser.execute_script("return document.getElementById('push-status').closest('[role=status]')?.id")
        self.assertEqual(status, "waiting-status")


class PhoneSizedWindowTests(DemoTestCase):
    phone_screen = (390, 844)

    def test_the_waiting_screen_fits_a_phone_sized_window(self):
        phone = self.phone()
        self.sign_in(with_code=True)
        self.visible("otp")
        self.assertEqual(self.browser.execute_script("return window.innerWidth"), 390)
        overflow = self.browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        self.assertLessEqual(overflow, 0, "the page scrolls sideways")
        self.screenshot("phone-sized-otp-waiting")
        phone.run("approve", "--otp", self.text("otp"))
        self.claims()


if __name__ == "__main__":
    unittest.main()
