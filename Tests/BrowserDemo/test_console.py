"""The operators' console (DESIGN.md §8) in headless Chromium, against `countersign serve --dev`.

Operators are invited through the admin API or `countersign operators invite`, enroll a `countersign device`
phone with the code, and sign in at /console with number matching on it. The tests walk every screen,
scan each with axe-core for serious or critical accessibility violations, and perform the attacks the
console must refuse: an auditor's changes, an idle session, a form posted from another origin.
Screenshots go to COUNTERSIGN_SCREENSHOTS (docs/CONSOLE.md shows them).
"""

import base64
import http.server
import importlib.resources
import json
import secrets
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

from test_demo import COUNTERSIGN, WAIT_SECONDS, DemoTestCase, Phone

ADMIN_KEY = "browser-tests-admin-key"
AXE = (importlib.resources.files("axe_core_python") / "axe.min.js").read_text()
APPLE_KEY_ID, APPLE_TEAM_ID, BUNDLE_ID = "KEY1234567", "TEAM123456", "com.example.bank"


class RegisteredPhone(Phone):
    """A `countersign device` profile registered with `arguments` (an operator's enrollment link, say)."""

    def __init__(self, directory, name, *arguments):
        self.profile = str(directory)
        self.name = name
        self.device_id = self.run("register", "--name", name, *arguments).stdout.split()[2]


class FakeAPNs:
    """`countersign-fake-apns`: Apple's push service as the project's protocol-checking fake, trusting one
    `.p8` key made here."""

    def __init__(self, directory):
        key = ec.generate_private_key(ec.SECP256R1())
        self.p8 = directory / "AuthKey.p8"
        self.p8.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        public = directory / "apns-public.pem"
        public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        self.process = subprocess.Popen(
            [str(Path(COUNTERSIGN).parent / "countersign-fake-apns"), APPLE_KEY_ID, APPLE_TEAM_ID, BUNDLE_ID, str(public)],
            stdout=subprocess.PIPE, text=True, bufsize=1)
        started = json.loads(self.process.stdout.readline())
        self.url, self.certificate_authority = started["url"], started["ca_certificate_pem"]

    def next_request(self):
        return json.loads(self.process.stdout.readline())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.process.stdout.close()


class ConsoleTestCase(DemoTestCase):
    # The console asks for its session before sign-in (401); refusals the tests provoke answer 400 and 403.
    expected_statuses = (400, 401, 403)

    def admin(self, method, path, body=None):
        request = urllib.request.Request(
            f"{self.server.url}/admin/v1/{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {ADMIN_KEY}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def operator(self, email, role):
        """Invites `email` through the admin API and enrolls a phone with the code."""
        status, invitation = self.admin("POST", "operators", {"email": email, "role": role})
        self.assertEqual(status, 201, invitation)
        self.phones += 1
        return RegisteredPhone(self.directory / f"operator-{self.phones}", "Operator's phone", "--enrollment-uri", invitation["enrollment_uri"])

    def eventually(self, condition, message=""):
        """Waits until `condition(browser)` holds; a part the page redrew meanwhile is looked up again."""
        return WebDriverWait(self.browser, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,)).until(condition, message)

    def click(self, selector, text=None):
        """Clicks the first shown element matching `selector` (and showing `text`), once the page has drawn it."""
        def clicked(browser):
            for element in browser.find_elements(By.CSS_SELECTOR, selector):
                if element.is_displayed() and (text is None or element.text == text):
                    element.click()
                    return True
            return False
        self.eventually(clicked, f"nothing shown to click matches {selector}")

    def hooked(self, selector, within=None):
        """The first shown element matching `selector` (within `within`), once the page has drawn it."""
        return self.eventually(
            lambda _: next((element for element in (within or self.browser).find_elements(By.CSS_SELECTOR, selector)
                            if element.is_displayed()), None), f"nothing shown matches {selector}")

    def sign_in(self, email, phone, screenshots=False):
        """Signs in at /console with the keyboard: the email, Enter, then the code typed on the phone."""
        self.browser.get(f"{self.server.url}/console")
        field = self.hooked("input[name=email]")
        if screenshots:
            self.scan("sign-in")
            self.screenshot("console-sign-in")
        field.send_keys(email, Keys.ENTER)
        code = WebDriverWait(self.browser, WAIT_SECONDS).until(
            lambda browser: next((element.text.strip() for element in browser.find_elements(By.CSS_SELECTOR, "[data-otp]")
                                  if element.text.strip()), None))
        self.assertRegex(code, r"^\d{6}$")
        if screenshots:
            self.screenshot("console-sign-in-waiting")
        approved = phone.run("approve", "--otp", code)
        self.assertIn("approved", approved.stdout)
        WebDriverWait(self.browser, WAIT_SECONDS).until(
            expected_conditions.text_to_be_present_in_element((By.CSS_SELECTOR, "[data-operator]"), email))

    def go(self, screen):
        self.click(f"[data-nav={screen}]")
        return self.hooked(f"main[data-screen={screen}]")

    def scan(self, name):
        """axe-core over the page as shown; a serious or critical violation fails the test."""
        self.browser.execute_script(AXE)
        violations = self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            axe.run(document, {resultTypes: ['violations']}).then(
                (result) => done(result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' '))}))),
                (error) => done([{id: 'axe-failed', impact: 'critical', help: String(error), nodes: []}]));""")
        serious = [violation for violation in violations if violation["impact"] in ("serious", "critical")]
        self.assertEqual(serious, [], f"accessibility violations on {name}")

    def submit(self, form, action):
        form.find_element(By.CSS_SELECTOR, f"[data-action={action}]").click()

    def error_in(self, container):
        return self.hooked("[data-error]", within=container).text


class ConsoleTests(ConsoleTestCase):
    def test_an_admin_signs_in_with_the_phone_and_walks_every_screen(self):
        # What the screens will show: Ada's phone, a payment she signed on it, Bob's phone on APNs.
        ada = self.phone("ada@example.com", "Ada's phone")
        self.open("payment")
        self.browser.find_element(By.ID, "payment-email").send_keys("ada@example.com")
        self.browser.find_element(By.ID, "payment-amount").send_keys("1000")
        Select(self.browser.find_element(By.ID, "payment-currency")).select_by_visible_text("EUR")
        self.browser.find_element(By.ID, "payment-payee").send_keys("Merchant A")
        self.browser.find_element(By.ID, "payment-submit").click()
        self.visible("waiting-details")
        ada.run("approve")
        self.visible("view-success")
        apns = FakeAPNs(self.directory)
        self.addCleanup(apns.stop)
        bob = RegisteredPhone(self.directory / "bob", "Bob's phone", "--server", self.server.url, "--email", "bob@example.com",
                              "--apns-token", secrets.token_hex(32), "--apns-bundle-id", BUNDLE_ID)

        # The first operator, through the command line.
        invited = subprocess.run(
            [COUNTERSIGN, "operators", "invite", "ops@bank.example", "--role", "admin", "--server", self.server.url],
            capture_output=True, text=True, timeout=60, env={"COUNTERSIGN_ADMIN_KEY": ADMIN_KEY, "PATH": "/usr/bin:/bin"})
        self.assertEqual(invited.returncode, 0, invited.stderr)
        link = next(line.strip() for line in invited.stdout.splitlines() if line.strip().startswith("countersign://enroll"))
        phone = RegisteredPhone(self.directory / "operator", "Operator's phone", "--enrollment-uri", link)
        self.sign_in("ops@bank.example", phone, screenshots=True)

        # Applications: one with a web and a backend client.
        screen = self.go("applications")
        form = self.hooked("form[data-form=create-application]")
        form.find_element(By.NAME, "id").send_keys("shop")
        form.find_element(By.NAME, "name").send_keys("Shop")
        form.find_element(By.NAME, "allowed_origins").send_keys("https://shop.example")
        self.submit(form, "create")
        self.hooked("tr[data-row=shop]")
        clients = self.hooked("form[data-form=create-client]")
        Select(clients.find_element(By.NAME, "application_id")).select_by_value("shop")
        clients.find_element(By.NAME, "id").send_keys("shop-web")
        clients.find_element(By.NAME, "name").send_keys("Shop pages")
        self.submit(clients, "create")
        self.hooked("tr[data-row=shop-web]")
        Select(clients.find_element(By.NAME, "application_id")).select_by_value("shop")
        clients.find_element(By.NAME, "id").send_keys("shop-bank")
        clients.find_element(By.NAME, "name").send_keys("Bank backend")
        Select(clients.find_element(By.NAME, "kind")).select_by_value("backend")
        numbers = ec.generate_private_key(ec.SECP256R1()).public_key().public_numbers()
        b64 = lambda number: base64.urlsafe_b64encode(number.to_bytes(32, "big")).rstrip(b"=").decode()
        clients.find_element(By.NAME, "jwks").send_keys(json.dumps(
            {"keys": [{"kty": "EC", "crv": "P-256", "kid": "bank-1", "x": b64(numbers.x), "y": b64(numbers.y)}]}))
        self.submit(clients, "create")
        self.hooked("tr[data-row=shop-bank]")
        status, applications = self.admin("GET", "applications")
        shop = next(application for application in applications if application["id"] == "shop")
        self.assertEqual({client["id"]: client["kind"] for client in shop["clients"]}, {"shop-web": "web", "shop-bank": "backend"})
        self.assertEqual(shop["allowed_origins"], ["https://shop.example"])
        self.scan("applications")
        self.screenshot("console-applications")

        # Push: the server's validation shown beside the form, then an APNs key uploaded and a test push.
        self.go("push")
        form = self.hooked("form[data-form=create-push-config]")
        self.submit(form, "create")
        self.assertIn("private_key_pem", self.error_in(form))
        form.find_element(By.NAME, "private_key_pem").send_keys(str(apns.p8))
        form.find_element(By.NAME, "key_id").send_keys(APPLE_KEY_ID)
        form.find_element(By.NAME, "team_id").send_keys(APPLE_TEAM_ID)
        form.find_element(By.NAME, "bundle_id").send_keys(BUNDLE_ID)
        Select(form.find_element(By.NAME, "environment")).select_by_value("sandbox")
        form.find_element(By.TAG_NAME, "summary").click()
        form.find_element(By.NAME, "endpoint").send_keys(apns.url)
        form.find_element(By.NAME, "ca_certificate_pem").send_keys(apns.certificate_authority)
        self.submit(form, "create")
        row = self.hooked("tr[data-row^=pcf_]")
        self.assertNotIn("PRIVATE KEY", self.browser.page_source, "key material is never shown again")
        row.find_element(By.NAME, "device_id").send_keys(bob.device_id)
        row.find_element(By.CSS_SELECTOR, "[data-action=test-push]").click()
        result = self.hooked("[data-test-push-result]")
        self.assertEqual(result.get_attribute("data-delivered"), "true", result.text)
        request = apns.next_request()
        self.assertEqual(request["status"], 200)
        self.assertEqual(json.loads(request["payload"])["data"]["type"], "test")
        self.scan("push")
        self.screenshot("console-push")

        # Journeys: the diagram of the loaded definition, its lint, and integration code in three languages.
        self.go("journeys")
        self.click("tr[data-row=web_login] a")
        diagram = self.hooked("svg[data-diagram]")
        status, journey = self.admin("GET", "journeys/web_login")
        drawn = {element.get_attribute("data-step") for element in diagram.find_elements(By.CSS_SELECTOR, "[data-step]")}
        self.assertEqual(drawn, {step["id"] for step in journey["steps"]})
        self.hooked("[data-lint=ok]")
        for language in ("javascript", "swift", "kotlin"):
            code = self.hooked(f"pre[data-code={language}]")
            self.assertIn("approve_on_phone", code.text)
        self.scan("journey")
        self.screenshot("console-journey")

        # Users: find Ada, revoke her phone (after a confirmation); her next approval then fails.
        self.go("users")
        form = self.hooked("form[data-form=find-user]")
        form.find_element(By.NAME, "external_user_id").send_keys("ada@example.com", Keys.ENTER)
        self.click("tbody tr[data-row^=usr_] a", text="ada@example.com")
        self.hooked(f"tr[data-row={ada.device_id}]")
        self.scan("user")
        self.click(f"tr[data-row={ada.device_id}] [data-action=revoke]")
        self.screenshot("console-user-revoke")
        self.click(f"tr[data-row={ada.device_id}] [data-action=confirm]")
        self.eventually(lambda browser: "revoked" in browser.find_element(By.CSS_SELECTOR, f"tr[data-row={ada.device_id}]").text.lower())
        self.open("login")
        self.browser.find_element(By.CSS_SELECTOR, "input[value=web_login_biometric_only]").click()
        self.browser.find_element(By.ID, "login-email").send_keys("ada@example.com", Keys.ENTER)
        self.assertNotEqual(ada.run("approve", check=False).returncode, 0, "a revoked phone approves nothing")
        self.browser.get(f"{self.server.url}/console#/approvals")

        # Approvals and push deliveries, evidence, security events, statistics, operators.
        self.hooked("main[data-screen=approvals] tr[data-row^=apr_]")
        self.scan("approvals")
        self.screenshot("console-approvals")

        self.go("evidence")
        self.click("tr[data-row] a")
        check = self.hooked("[data-verification][data-signature-valid]")
        self.assertEqual(check.get_attribute("data-signature-valid"), "true")
        self.assertEqual(check.get_attribute("data-seal-valid"), "true")
        self.assertIn("Merchant A", self.hooked("main[data-screen=evidence]").text)
        self.click("[data-action=download]")
        self.scan("evidence")
        self.screenshot("console-evidence")

        self.go("security-events")
        form = self.hooked("form[data-form=filter-security-events]")
        Select(form.find_element(By.NAME, "kind")).select_by_value("credential_revoked")
        form.find_element(By.NAME, "actor").send_keys("ops@bank.example")
        self.submit(form, "filter")
        self.eventually(lambda browser: browser.find_elements(By.CSS_SELECTOR, "tr[data-row^=sev_]") and all(
            "credential_revoked" in row.text for row in browser.find_elements(By.CSS_SELECTOR, "tr[data-row^=sev_]")))
        self.scan("security-events")
        self.screenshot("console-security-events")

        self.go("stats")
        self.hooked("main[data-screen=stats] svg")
        self.scan("stats")
        self.screenshot("console-stats")

        self.go("operators")
        form = self.hooked("form[data-form=invite-operator]")
        form.find_element(By.NAME, "email").send_keys("audit@bank.example")
        Select(form.find_element(By.NAME, "role")).select_by_value("auditor")
        self.submit(form, "invite")
        self.assertTrue(self.hooked("[data-enrollment-uri]").text.startswith("countersign://enroll"))
        self.scan("operators")
        self.screenshot("console-operators")

        # The command line lists them, and removes one.
        command = lambda *arguments: subprocess.run(
            [COUNTERSIGN, "operators", *arguments, "--server", self.server.url],
            capture_output=True, text=True, timeout=60, env={"COUNTERSIGN_ADMIN_KEY": ADMIN_KEY, "PATH": "/usr/bin:/bin"})
        listed = command("list").stdout
        self.assertRegex(listed, r"ops@bank\.example\s+admin\s+phone enrolled")
        self.assertRegex(listed, r"audit@bank\.example\s+auditor\s+no phone yet")
        self.assertEqual(command("remove", "audit@bank.example").returncode, 0)
        status, operators = self.admin("GET", "operators")
        self.assertEqual([operator["email"] for operator in operators], ["ops@bank.example"])

        self.click("[data-action=sign-out]")
        self.hooked("input[name=email]")
        status, events = self.admin("GET", "security-events?actor=ops@bank.example&limit=100")
        kinds = {event["kind"] for event in events["security_events"]}
        self.assertTrue({"application_changed", "push_config_changed", "credential_revoked", "operator_changed", "console_signed_in"} <= kinds, kinds)

    def test_an_auditor_is_refused_every_change_by_the_server(self):
        ada = self.phone("ada@example.com", "Ada's phone")
        phone = self.operator("audit@bank.example", "auditor")
        self.sign_in("audit@bank.example", phone)
        self.go("applications")
        form = self.hooked("form[data-form=create-application]")
        form.find_element(By.NAME, "id").send_keys("shop")
        form.find_element(By.NAME, "name").send_keys("Shop")
        self.submit(form, "create")
        self.assertIn("auditor", self.error_in(form))
        self.screenshot("console-auditor-refused")

        self.go("users")
        self.hooked("form[data-form=find-user] input[name=external_user_id]").send_keys("ada@example.com", Keys.ENTER)
        self.click("tbody tr[data-row^=usr_] a", text="ada@example.com")
        self.click(f"tr[data-row={ada.device_id}] [data-action=revoke]")
        self.click(f"tr[data-row={ada.device_id}] [data-action=confirm]")
        self.assertIn("auditor", self.error_in(self.hooked(f"tr[data-row={ada.device_id}]")))

        # The page is not what refuses: the same calls from the page's own script, with its CSRF token.
        statuses = self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            (async () => {
              const session = await (await fetch('/console/session')).json();
              const headers = {'Content-Type': 'application/json', 'X-CSRF-Token': session.csrf_token};
              const calls = [['POST', '/admin/v1/applications', {id: 'shop', name: 'Shop'}],
                             ['POST', '/admin/v1/operators', {email: 'eve@bank.example', role: 'admin'}],
                             ['POST', '/admin/v1/signing-keys/rotate', {}]];
              const answers = [];
              for (const [method, path, body] of calls) answers.push((await fetch(path, {method, headers, body: JSON.stringify(body)})).status);
              done(answers);
            })();""")
        self.assertEqual(statuses, [403, 403, 403])
        status, applications = self.admin("GET", "applications")
        self.assertNotIn("shop", [application["id"] for application in applications])
        status, user = self.admin("GET", f"users?external_user_id=ada@example.com")
        status, devices = self.admin("GET", f"users/{user[0]['id']}/devices")
        self.assertEqual(devices[0]["status"], "active")

    def test_a_form_posted_from_another_site_changes_nothing(self):
        # The server's own answer page has no favicon.
        self.expected_messages = ("favicon.ico",)
        phone = self.operator("ops@bank.example", "admin")
        self.sign_in("ops@bank.example", phone)
        target = f"{self.server.url}/admin/v1/applications"
        page = f"""<!doctype html><html lang="en"><title>A prize</title><body>
            <form method="post" action="{target}" enctype="text/plain">
            <input type="hidden" name='{{"id":"evil","name":"Evil","x":"' value='"}}'></form>
            <script>document.forms[0].submit()</script></body></html>""".encode()

        class Attacker(http.server.BaseHTTPRequestHandler):
            # The page at any path (the browser also asks for a favicon).
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *arguments):
                pass

        attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=attacker.serve_forever, daemon=True).start()
        self.addCleanup(attacker.server_close)
        self.addCleanup(attacker.shutdown)
        self.browser.get(f"http://127.0.0.1:{attacker.server_address[1]}/")
        WebDriverWait(self.browser, WAIT_SECONDS).until(lambda browser: browser.current_url.startswith(target))
        self.assertIn("forbidden", self.browser.page_source)
        status, applications = self.admin("GET", "applications")
        self.assertNotIn("evil", [application["id"] for application in applications])
        status, events = self.admin("GET", "security-events?kind=console_refused")
        self.assertIn("CSRF", events["security_events"][0]["detail"])

    def test_the_console_page_is_held_to_its_own_origin(self):
        with urllib.request.urlopen(f"{self.server.url}/console", timeout=5) as response:
            policy = response.headers["Content-Security-Policy"]
        self.assertIn("default-src 'none'", policy)
        self.assertIn("script-src 'self'", policy)
        self.assertIn("frame-ancestors 'none'", policy)
        self.browser.get(f"{self.server.url}/console")
        self.hooked("input[name=email]")
        sources = self.browser.execute_script(
            "return [...document.querySelectorAll('script[src], link[href]')].map((element) => element.src || element.href)")
        self.assertTrue(all(source.startswith(self.server.url) or source.startswith("data:") for source in sources), sources)


class IdleConsoleTests(ConsoleTestCase):
    # A bank's shorter idle time (COUNTERSIGN_CONSOLE_IDLE_TIMEOUT), so that the test need not wait 30 minutes.
    idle_seconds = 6
    server_settings = {"COUNTERSIGN_CONSOLE_IDLE_TIMEOUT": str(idle_seconds)}

    def test_a_session_past_its_idle_time_is_sent_back_to_sign_in(self):
        phone = self.operator("ops@bank.example", "admin")
        self.sign_in("ops@bank.example", phone)
        self.go("applications")
        time.sleep(self.idle_seconds + 2)
        self.click("[data-nav=journeys]")
        self.hooked("input[name=email]")
        self.assertEqual([element for element in self.browser.find_elements(By.CSS_SELECTOR, "[data-operator]") if element.text], [])
        status, events = self.admin("GET", "security-events?kind=console_signed_in")
        self.assertEqual(len(events["security_events"]), 1, "the session ended by itself, not by a sign-out")


class KeyboardAndOutageTests(ConsoleTestCase):
    def test_the_console_works_with_the_keyboard_alone(self):
        phone = self.operator("ops@bank.example", "admin")
        self.sign_in("ops@bank.example", phone)
        self.hooked("main[data-screen]")

        def tab_to(selector):
            for _ in range(60):
                self.browser.switch_to.active_element.send_keys(Keys.TAB)
                if self.browser.execute_script("return document.activeElement.matches(arguments[0])", selector):
                    return
            self.fail(f"Tab never reached {selector}")

        tab_to("[data-nav=journeys]")
        self.browser.switch_to.active_element.send_keys(Keys.ENTER)
        self.hooked("main[data-screen=journeys] tr[data-row=web_login]")
        tab_to("tr[data-row=web_login] a")
        self.browser.switch_to.active_element.send_keys(Keys.ENTER)
        self.hooked("svg[data-diagram]")
        tab_to("[data-nav=operators]")
        self.browser.switch_to.active_element.send_keys(Keys.ENTER)
        self.hooked("main[data-screen=operators]")
        tab_to("form[data-form=invite-operator] input[name=email]")
        self.browser.switch_to.active_element.send_keys("audit@bank.example", Keys.ENTER)
        self.assertTrue(self.hooked("[data-enrollment-uri]").text.startswith("countersign://enroll"))

    def test_a_lost_connection_is_said_where_the_action_was(self):
        # The browser reports the failed request itself.
        self.expected_messages = ("ERR_CONNECTION_REFUSED",)
        phone = self.operator("ops@bank.example", "admin")
        self.sign_in("ops@bank.example", phone)
        self.go("applications")
        form = self.hooked("form[data-form=create-application]")
        form.find_element(By.NAME, "id").send_keys("shop")
        form.find_element(By.NAME, "name").send_keys("Shop")
        self.server.stop()
        self.submit(form, "create")
        self.assertIn("cannot be reached", self.error_in(form))
