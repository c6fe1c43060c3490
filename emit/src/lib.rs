//! Hardware passes, top-level stitching, weight memories and project files for MaseGraph designs.
