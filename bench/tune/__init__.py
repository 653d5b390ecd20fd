"""Tuning (``cardinal tune``; front end in :mod:`engine.cli`): Texel tuning of the linear
evaluation from self-play data.

Two steps, and an optional one between them:

``datagen`` (:mod:`bench.tune.selfplay`)
    self-play games at a node limit; their quiet positions, results and search scores
    are appended to a data file (format: :mod:`bench.tune.datafile`).
``teacher`` (optional, :mod:`bench.tune.rescore`)
    re-scores a data file's positions with an outside UCI engine at a fixed depth.
``fit`` (:mod:`bench.tune.texel`)
    fits ``K``, then the mg/eg weights by L-BFGS-B, and writes ``variants/weights/<variant>.json``.

``pgn`` (:mod:`bench.tune.pgn_data`) makes a data file from the games of PGN files instead.
``nnue-data`` (:mod:`bench.tune.nnue_data`) plays the network's training data in chunks with a
manifest, and ``nnue-train`` (:mod:`bench.tune.nnue`) trains the network on data files.
``spsa`` (:mod:`bench.tune.spsa`) tunes the search's constants (:mod:`search.params`) by
fishtest's SPSA, from game pairs.
This package re-exports the public names of its modules (``from bench.tune import fit``).
"""
from __future__ import annotations

from search.eval import (WS_SIZE, FEATURES, eval_features, phase_total, load_weights, write_weights,
                         feature_bounds, feature_used, build_eval)
from bench.tune.datafile import (HEADER, HEADER_KEYS, DataSet, GameRecord, default_data_path, format_game,
                                 header_line, parse_header, read_data, scan_data, weights_digest)
from bench.tune.selfplay import (DEFAULT_NODES, DEFAULT_GAMES, NODE_JITTER, SKIP_PLIES, MAX_RECORD_CP, WIN_CP,
                                 WIN_PLIES, DRAW_CP, DRAW_PLIES, DRAW_AFTER_PLY, MAX_PLIES, MATE_CP, HASH_MB,
                                 DatagenResult, datagen, game_seed, game_start, mirror_fen, opening_fens,
                                 play_game, search_move)
from bench.tune.rescore import (DEFAULT_TEACHER_DEPTH, TEACHER_TIMEOUT, TEACHER_KEYS, STATIC_EVAL_RE,
                                TeacherResult, teacher, teacher_score)
from bench.tune.pgn_data import PGN_SCORE_RE, PGN_RESULTS, PgnDataResult, pgn_comment_cp, pgn_data
from bench.tune.texel import (NF, DEFAULT_VAL, DEFAULT_MAX_ITER, DEFAULT_L2, DEFAULT_LAMBDA, SCALE, LN10,
                              HISTORY_NOTE, FitResult, Model, TuneReport, default_score_k, default_weights_path,
                              extract_features, fit, fit_k, fit_scale, fit_weights, git_commit, moved_most,
                              previous_history, print_report, sigmoid, split_by_game)
