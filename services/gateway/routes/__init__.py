"""The gateway's HTTP routes as Flask blueprints, one module per resource."""
