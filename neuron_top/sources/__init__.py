"""Report sources. Each yields the same items (see ``base``): live, recorded, simulated or collected."""
