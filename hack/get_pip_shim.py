"""Stand-in for the get-pip script ansible-test downloads (no network for it here): bootstrap pip
with ensurepip, then install what ansible-test asked for from the configured index."""
import subprocess
import sys

subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"])
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)
