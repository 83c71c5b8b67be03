"""Suite-wide settings: property tests are reproducible and never fail on a slow machine's clock."""

import os

from hypothesis import settings

# derandomize: the same examples on every run (CI must not turn red on a new random draw; new
# draws are explored locally with HYPOTHESIS_PROFILE=explore). No deadline: timing is not what
# these tests check. No example database: nothing is written into the checkout.
settings.register_profile("default", deadline=None, derandomize=True, database=None)
settings.register_profile("explore", deadline=None, database=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
