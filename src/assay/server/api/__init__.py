"""The JSON API's routers, one module per resource; mounted under ``/api`` by
``create_app``."""
