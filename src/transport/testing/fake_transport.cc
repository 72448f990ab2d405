// Placeholder until the fake transport lands.
