"""The colours of every front figure and of ``dse report``: Okabe and Ito's colour-blind-safe palette
("Color Universal Design", 2008), in one order, and a neutral grey for what is not data (a certificate's
region). No red stands for anything but data: nothing drawn here is alarming.

``dse/store/report/report.js`` holds the same colours (its ``OKABE_ITO``), in the same order.
"""

from __future__ import annotations

__all__ = ["BLACK", "BLUE", "BLUISH_GREEN", "NEUTRAL", "NEUTRAL_FILL", "ORANGE", "REDDISH_PURPLE", "SERIES",
           "SKY_BLUE", "VERMILLION", "YELLOW"]

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
#: Lines of a certificate's region: a dark neutral grey.
NEUTRAL = "#555555"
#: Fill of a certificate's region: the same grey, nearly transparent (RGBA).
NEUTRAL_FILL = (0.33, 0.33, 0.33, 0.07)

#: Colours of data series in order (solvers, swept values): yellow, the faintest on white, last.
SERIES = (BLUE, ORANGE, BLUISH_GREEN, REDDISH_PURPLE, SKY_BLUE, VERMILLION, BLACK, YELLOW)
