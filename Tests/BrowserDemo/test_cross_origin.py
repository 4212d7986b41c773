"""The demo page served from a second origin (another port), as a relying party serves its own pages,
signing in against the Countersign server across origins: allowed by the application's
`allowed_origins`, refused by the browser otherwise."""

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from test_demo import WAIT_SECONDS, DemoTestCase


class PageOrigin:
    """A plain web server on its own port serving copies of the demo page, its script and style, with the
    page's `countersign-server` naming the Countersign server and its script importing the browser SDK
    from there, as a relying party's page would."""

    def __init__(self, server_url):
        def fetch(path):
            with urllib.request.urlopen(f"{server_url}{path}", timeout=5) as response:
                return response.read()

        page = fetch("/demo").replace(
            b'<meta name="countersign-server" content="">', f'<meta name="countersign-server" content="{server_url}">'.encode())
        assert server_url.encode() in page, "the demo page has no countersign-server to name the server in"
        script = fetch("/demo/demo.js").replace(b"from '/sdk/countersign.js'", f"from '{server_url}/sdk/countersign.js'".encode())
        assert server_url.encode() in script, "the demo script does not import the SDK as expected"
        files = {
            "/demo": ("text/html; charset=utf-8", page),
            "/demo/demo.js": ("text/javascript", script),
            "/demo/demo.css": ("text/css", fetch("/demo/demo.css")),
        }

        class Files(BaseHTTPRequestHandler):
            def do_GET(self):
                content_type, body = files.get(self.path.split("?")[0], ("text/plain", None))
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", content_type)
                self.end_headers()
                self.wfile.write(body or b"not found")

            def log_message(self, *arguments):
                pass

        # Port 0: the kernel picks a free one as the socket binds, so nothing can take it in between.
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Files)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class CrossOriginTests(DemoTestCase):
    def setUp(self):
        super().setUp()
        self.page_origin = PageOrigin(self.server.url)
        self.addCleanup(self.page_origin.stop)

    def open(self, page="login"):
        self.browser.get(f"{self.page_origin.url}/demo#{page}")
        return self.visible(f"view-{page}")

    def wait_until(self, condition, what):
        deadline = time.monotonic() + WAIT_SECONDS
        while not condition():
            if time.monotonic() > deadline:
                self.fail(f"never happened: {what}")
            time.sleep(0.1)

    def admin(self, method, path, body=None):
        request = urllib.request.Request(
            f"{self.server.url}/admin/v1/{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": "Bearer browser-tests-admin-key", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)

    def test_a_page_on_an_allowed_origin_signs_in_across_origins(self):
        self.admin("PATCH", "applications/demo", {"allowed_origins": [self.page_origin.url]})
        phone = self.phone()
        self.sign_in()
        self.visible("view-waiting")
        # The page listens on the events stream, itself a cross-origin request (polling alone would also end
        # in success, so the stream is checked here while the page waits).
        self.wait_until(lambda: self.admin("GET", "stats")["event_streams_open"] == 1, "the page's events stream is open")
        watch = phone.watch("--auto-approve", "--count", "1")
        self.addCleanup(watch.stop)
        claims = self.claims()
        self.assertEqual(claims["user"], "ada@example.com")
        self.assertEqual(claims["device"], phone.device_id)
        self.assertTrue(self.browser.current_url.startswith(self.page_origin.url))
        self.screenshot("cross-origin-success")

    def test_a_page_on_an_origin_no_application_allows_is_stopped_by_the_browser(self):
        # The browser reports the request it blocked.
        self.expected_messages = ("CORS policy", "net::ERR_FAILED")
        self.admin("PATCH", "applications/demo", {"allowed_origins": ["https://bank.example"]})
        self.phone()
        self.sign_in()
        self.wait_for_text("login-error", "could not be reached")
        self.assertFalse(self.browser.find_element("id", "view-waiting").is_displayed())
        self.assertEqual(self.admin("GET", "stats")["interactions_stored"], 1, "only the phone's registration: no sign-in started")
        self.screenshot("cross-origin-refused")
