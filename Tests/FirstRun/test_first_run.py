"""A newcomer's first commands, run as a newcomer would: the release archive unpacked and started in a
directory of its own, and the README's first command (scripts/dev.sh) from a clean clone.

COUNTERSIGN_BIN_PATH names the build directory to package (the suite's debug build); without
COUNTERSIGN_FIRST_RUN_CLONE=1 the clean clone, which builds the server once more, is skipped."""

import json
import os
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import time
import unittest
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request(url, body=None, timeout=10):
    """(status, parsed JSON or text) of a GET, or of a POST of `body` as JSON."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as answer:
            status, text = answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        status, text = refused.code, refused.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def read(path):
    with open(path) as file:
        return file.read()


def wait_for_health(base, process, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server stopped at start (status {process.returncode})")
        try:
            if request(base + "/healthz", timeout=2)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{base}/healthz did not answer within {seconds} s")


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class ReleaseArchive(unittest.TestCase):
    def test_the_archive_runs_from_its_own_directory_in_production_with_the_journeys_built_in(self):
        bin_path = os.environ["COUNTERSIGN_BIN_PATH"]
        work = tempfile.mkdtemp(prefix="countersign-archive.")
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        made = subprocess.run(
            [os.path.join(ROOT, "scripts", "package.sh"), work], capture_output=True, text=True, timeout=300,
            env={**os.environ, "COUNTERSIGN_PACKAGE_BIN_PATH": bin_path}, check=True)
        archive = made.stdout.strip().splitlines()[-1]
        with tarfile.open(archive) as packed:
            packed.extractall(work, filter="data")
        (folder,) = [name for name in os.listdir(work) if os.path.isdir(os.path.join(work, name))]
        unpacked = os.path.join(work, folder)
        for part in ("INSTALL", "journeys/web_login.yaml", "deploy/nginx-countersign.conf"):
            self.assertTrue(os.path.exists(os.path.join(unpacked, part)), part)
        binary = os.path.join(unpacked, "bin", "countersign")
        version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.strip()
        self.assertIn(version, folder)

        # Started from a directory with no journeys in it, its state in a path of its own.
        run = os.path.join(work, "run")
        os.mkdir(run)
        port = free_port()
        environment = {key: value for key, value in os.environ.items() if not key.startswith("COUNTERSIGN_")}
        environment.update(COUNTERSIGN_PORT=str(port), COUNTERSIGN_DATABASE_URL=os.path.join(work, "state", "db.sqlite"),
                           COUNTERSIGN_MASTER_KEY_FILE=os.path.join(work, "state", "master-key"))
        os.mkdir(os.path.join(work, "state"))
        log = open(os.path.join(work, "server.log"), "w")
        self.addCleanup(log.close)
        server = subprocess.Popen([binary, "serve"], cwd=run, env=environment, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        self.addCleanup(stop, server)
        base = f"http://127.0.0.1:{port}"
        wait_for_health(base, server, 60)
        # web_login is built in: an unknown client is refused (401), where an unknown journey is 404.
        status, body = request(base + "/v1/journeys/web_login/start", {"client_id": "nobody"})
        self.assertEqual(status, 401, body)
        self.assertEqual(request(base + "/v1/journeys/no_such_journey/start", {"client_id": "nobody"})[0], 404)
        self.assertEqual(request(base + "/demo")[0], 404, "production serves no demo")
        self.assertEqual(os.listdir(run), [], "nothing is written where the server was started")
        self.assertTrue(os.path.exists(os.path.join(work, "state", "db.sqlite")))


@unittest.skipUnless(os.environ.get("COUNTERSIGN_FIRST_RUN_CLONE") == "1", "set COUNTERSIGN_FIRST_RUN_CLONE=1")
class FirstCommand(unittest.TestCase):
    def test_scripts_dev_sh_from_a_clean_clone_serves_healthz_and_the_demo(self):
        work = tempfile.mkdtemp(prefix="countersign-clone.")
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        clone = os.path.join(work, "countersign")
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        port = free_port()
        environment = {key: value for key, value in os.environ.items() if not key.startswith("COUNTERSIGN_")}
        environment["COUNTERSIGN_PORT"] = str(port)
        log_path = os.path.join(work, "dev.txt")
        log = open(log_path, "w")
        self.addCleanup(log.close)
        dev = subprocess.Popen(["scripts/dev.sh"], cwd=clone, env=environment, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
        self.addCleanup(stop, dev)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 40 * 60
        while "Countersign is running" not in read(log_path):
            self.assertIsNone(dev.poll(), read(log_path)[-3000:])
            self.assertLess(time.monotonic(), deadline, "scripts/dev.sh did not start the server in 40 minutes")
            time.sleep(2)
        self.assertEqual(request(base + "/healthz")[0], 200)
        status, page = request(base + "/demo")
        self.assertEqual(status, 200)
        self.assertIn("<html", page.lower())
        print("\n".join(read(log_path).rstrip().splitlines()[-9:]))


if __name__ == "__main__":
    unittest.main()
