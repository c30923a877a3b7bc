"""The upstream leg: credentials for the route, the upstream's answer head screened."""
