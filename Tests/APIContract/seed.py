"""Gives a fresh development server something to show before the contract run fuzzes it, and writes the
run's schemathesis configuration.

What it makes, with the simulated phone of `countersign device`: a phone for ada@example.com, which signs
one payment and then approves what reaches it during the run (run.sh starts it watching), and a phone for
bob@example.com, whose ids the generated requests use now and then (revoking it, say, leaves Ada's
phone working); an APNs configuration too, when openssl is there to make its key. So the listings and
records the admin API shows are real ones. The configuration it writes comes from schemathesis.toml
beside this file, with the seeded values filled in.

Usage: seed.py BASE_URL ADMIN_KEY COUNTERSIGN_BIN WORK_DIR SEED MAX_EXAMPLES STATEFUL_EXAMPLES
(the server's metrics token, when it has one, in CONTRACT_METRICS_TOKEN)
"""

import json
import os
import shutil
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

EMAIL = "ada@example.com"
OTHER_EMAIL = "bob@example.com"


def call(base, method, path, body=None, token=None, expect=(200,)):
    """One request; the JSON answer. Any other status than `expect` stops the seeding."""
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    if status not in expect:
        raise SystemExit(f"seed: {method} {path} answered {status}: {text[:300]!r}")
    return json.loads(text) if text else None


def wait_until_ready(base, seconds=60):
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(base + "/readyz", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"seed: {base}/readyz did not answer 200 within {seconds} s")
        time.sleep(0.25)


def register_phone(base, admin_key, binary, profile, email):
    """The user `email` and the phone just registered for them."""
    subprocess.run(
        [binary, "device", "register", "--server", base, "--email", email, "--name", "Contract phone", "--profile", str(profile)],
        check=True, stdout=subprocess.DEVNULL, timeout=60)
    user = next(u for u in call(base, "GET", "/admin/v1/users", token=admin_key) if u["external_user_id"] == email)
    return user, call(base, "GET", f"/admin/v1/users/{user['id']}/devices", token=admin_key)[0]


def add_push_config(base, admin_key, work):
    """An APNs configuration with a fresh P-256 key; skipped without openssl."""
    if not shutil.which("openssl"):
        print("seed: no openssl, so no push configuration")
        return
    key = subprocess.run(
        "openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt",
        shell=True, check=True, capture_output=True, text=True, cwd=work).stdout
    call(base, "POST", "/admin/v1/push-configs", {
        "type": "apns", "bundle_id": "com.example.contract", "team_id": "TEAM123456", "key_id": "KEY1234567",
        "environment": "sandbox", "private_key_pem": key,
    }, token=admin_key, expect=(201,))


def sign_payment(base, binary, profile):
    """A payment signed on the phone: evidence, a push delivery and an approval on record."""
    step = call(base, "POST", "/v1/journeys/web_transaction_signing/start", {"client_id": "demo-web"})
    step = call(base, "POST", f"/v1/interactions/{step['interaction_id']}/submit", {
        "option": "client_input",
        "data": {"email": EMAIL, "amount": "12.50", "currency": "EUR", "payee": "ACME Ltd"},
    }, token=step["interaction_token"])
    subprocess.run([binary, "device", "approve", "--profile", str(profile)], check=True, stdout=subprocess.DEVNULL, timeout=60)
    for _ in range(20):
        answer = call(base, "POST", f"/v1/interactions/{step['interaction_id']}/submit", {"option": "client_input", "data": {}},
                      token=step["interaction_token"], expect=(200, 429))
        if "interaction_id" not in answer:  # 429 slow_down: the same token stays valid
            time.sleep(1)
            continue
        step = answer
        if step["journey_step_id"] != "mobile_approve_authentication":
            break
    if step["journey_step_id"] != "action:success":
        raise SystemExit(f"seed: the payment was not signed: {step}")


def main():
    base, admin_key, binary, work, seed, max_examples, stateful_examples = sys.argv[1:8]
    work = Path(work)
    profile = work / "phone"
    wait_until_ready(base)
    register_phone(base, admin_key, binary, profile, EMAIL)
    user, device = register_phone(base, admin_key, binary, work / "other-phone", OTHER_EMAIL)
    add_push_config(base, admin_key, work)
    sign_payment(base, binary, profile)
    template = string.Template((Path(__file__).parent / "schemathesis.toml").read_text())
    (work / "schemathesis.toml").write_text(template.substitute(
        admin_key=admin_key, metrics_token=os.environ.get("CONTRACT_METRICS_TOKEN", ""), seed=seed,
        max_examples=max_examples, stateful_examples=stateful_examples, user_id=user["id"], device_id=device["id"],
        email=EMAIL))
    print(f"seed: phones for {EMAIL} and {OTHER_EMAIL} (user {user['id']}, device {device['id']})")


if __name__ == "__main__":
    main()
