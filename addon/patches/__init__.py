"""Every mitmproxy internal the gateway touches, each guarded by tests/addon/test_patches.py."""
