// Placeholder until the TCP transport lands.
