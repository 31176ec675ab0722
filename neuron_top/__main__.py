import sys

from neuron_top.cli.main import main

sys.exit(main())
