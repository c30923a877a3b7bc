import sys

from translators.cli import main

sys.exit(main())
