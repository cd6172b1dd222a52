//! OCI images without a daemon: reproducible layers, OCI image layouts and a registry client.
