// Placeholder until algorithms land.
