"""`python -m critwin_lib.claims`: write results/claims.csv (see `scoreboard`)."""

import sys

from critwin_lib.claims.scoreboard import main

sys.exit(main())
