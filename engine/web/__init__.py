"""``cardinal serve``: a browser board (play, analyse, watch) over Cardinal's rules and engine.

:mod:`engine.web.server` parses the command line and runs uvicorn,
:mod:`engine.web.app` is the Starlette application, :mod:`engine.web.game` the
game model, :mod:`engine.web.engines` the engine process adapter and
:mod:`engine.web.watch` the match follower. The front end is static files in
``static/`` (HTML, CSS and JavaScript modules, no build step).
"""
