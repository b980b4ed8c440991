"""`python tests/batch/ray_head.py TEMP_DIR`: a local Ray cluster (2 CPUs) until stdin closes.

Prints the cluster's address (GCS, 127.0.0.1:PORT) on its first line; the test's fixture
gives it RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (loopback only) and RAY_AUTH_MODE=disabled.
"""

import sys

import ray

context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=sys.argv[1])
print(context.address_info["gcs_address"], flush=True)
sys.stdin.read()
ray.shutdown()
