//! File-based catalogs (FBC): the on-disk format, the validated model, and the commands on them.
