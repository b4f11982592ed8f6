"""Provider wire shapes shared by the format readers (a reader never imports another reader)."""
