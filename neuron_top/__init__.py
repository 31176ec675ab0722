"""neuron-top: a terminal dashboard for AWS Neuron accelerators.

The package root is the headless core: nothing imported from here pulls in textual or rich.
"""

__version__ = "0.1.0"
