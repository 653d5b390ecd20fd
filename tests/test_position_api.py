"""The Python API refuses bad input cleanly and survives very long games."""
import pytest

from engine.rules.position import Position
from engine.rules import layout as L


def test_push_rejects_a_move_that_is_not_legal():
    pos = Position.from_fen(variant="grand")
    pos.push_uci("e3e5")
    before = pos.fen()
    for bad in (123456789, -1, 0):
        with pytest.raises(ValueError):
            pos.push(bad)
        with pytest.raises(ValueError):
            pos.san(bad)
    assert pos.fen() == before


def test_game_longer_than_the_undo_stack():
    """2,100 plies without a capture or pawn move (the undo stack holds 2,048): no crash,
    status and FEN stay right, and recent repetitions are still seen."""
    pos = Position.from_fen()
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    for i in range(2100):
        pos.push_uci(shuffle[i % 4])
    assert pos.fen().split()[:4] == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -".split()
    assert pos.status() == "fifty"
    assert pos.perft(2) == 400
    pos.pop()
    pos.push_uci("f6g8")


def test_gui_move_leniency_is_only_for_relayed_checks():
    """push_gui_move accepts a move that is illegal only because of a relayed attack
    (Cute Chess 1.5's knightrelay rules), and nothing else."""
    pos = Position.from_fen("8/4k3/3R4/1N6/8/8/8/4K3 b - - 0 1", "knightrelay")
    with pytest.raises(ValueError):
        pos.push_uci("e7e8")                     # into the relayed rook's knight jump
    mv, warning = pos.push_gui_move("e7e8")
    assert warning and pos.opponent_in_check()
    chess = Position.from_fen("4k3/8/8/8/8/8/4R3/4K3 b - - 0 1")
    with pytest.raises(ValueError):
        chess.push_gui_move("e8e7")              # a plain illegal move is refused in every variant
    relay = Position.from_fen("4k3/8/8/8/8/8/4R3/4K3 b - - 0 1", "knightrelay")
    with pytest.raises(ValueError):
        relay.push_gui_move("e8e7")              # attacked by the rook itself: refused


def test_perft_rejects_negative_depth():
    pos = Position.from_fen(None, "grand")
    for bad in (-1, -5, 1.5, "2"):
        with pytest.raises(ValueError):
            pos.perft(bad)
    with pytest.raises(ValueError):
        pos.divide(0)
    assert pos.perft(0) == 1


def test_knightrelay_repetition_across_relayed_pawn_jumps():
    """knightrelay.md: repetition is orthodox, and a relayed pawn jump resets the 50-move
    counter. A relayed pawn can jump back (c3-a4-c3, relayed by the knights on e2 and b2),
    so the same position three times is a draw even though every repeat crossed a pawn
    move: the repetition window is not cut at the counter's reset there."""
    p = Position.from_fen("4k3/8/8/8/8/2P5/1N2N3/4K3 w - - 0 1", "knightrelay")
    seen = []
    for mv in "c3a4 e8d8 a4c3 d8e8 c3a4 e8d8 a4c3 d8e8".split():
        p.push_uci(mv)
        seen.append(p.status())
        if mv in ("c3a4", "a4c3"):
            assert p.st[L.S_HALFMOVE] == 0          # a relayed pawn jump is a pawn move
    assert seen[:-1] == ["ongoing"] * 7 and seen[-1] == "repetition"
    # orthodox chess keeps the cheap window: a pawn step can never be undone
    c = Position.from_fen("4k3/8/8/8/8/2P5/8/4K3 w - - 0 1", "chess")
    for mv in "e1d1 e8d8 d1e1 d8e8 c3c4 e8d8 e1d1 d8e8 d1e1".split():
        c.push_uci(mv)
    assert c.status() == "ongoing"
