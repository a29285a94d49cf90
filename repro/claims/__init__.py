"""Claims: the published claims as data, checked by one generic function, with named tolerance policies."""
