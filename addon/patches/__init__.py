"""Every mitmproxy internal the gateway touches, each guarded by tests/addon/patches/test_patches.py."""
