//! The catalog gRPC server (`api.Registry`) that OLM's catalog-operator queries.
