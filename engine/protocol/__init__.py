"""The protocol layer: the command loop (:mod:`.loop`), the shared session
(:mod:`.session`: warm-up, options, searcher), and the UCI and XBoard handlers."""
