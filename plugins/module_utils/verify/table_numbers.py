# Copyright (c) 2026 gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Numbers in the result tables that benchmark tools print (perftest_output.py, nccl_tests_output.py): one definition of
what a cell may hold, so that neither parser turns garbage into a silent wrong number. Pure standard library."""


import math
import re

NOT_A_NUMBER = 'not a number'
NOT_WHOLE = 'not a whole number'
NOT_FINITE = 'not finite'
NEGATIVE = 'negative'
_WHOLE = re.compile(r'^\d{1,20}\Z')
_SIGNED_WHOLE = re.compile(r'^-?\d{1,20}\Z')


class CellError(ValueError):
    """A table cell that is not the number it should be; ``problem`` is one of the constants above."""

    def __init__(self, token, problem):
        super().__init__('%r is %s' % (token, problem))
        self.token = token
        self.problem = problem


def cell_number(token, whole=False, signed=False):
    """The value of one cell: a whole number (``whole``; ``signed`` allows a minus sign) or a finite float, never
    negative unless ``signed``. Raises CellError saying what is wrong."""
    if whole:
        if not (_SIGNED_WHOLE if signed else _WHOLE).match(token):
            raise CellError(token, NOT_WHOLE)
        return int(token)
    try:
        value = float(token)
    except ValueError:
        raise CellError(token, NOT_A_NUMBER)
    if math.isnan(value) or math.isinf(value):
        raise CellError(token, NOT_FINITE)
    if value < 0 and not signed:
        raise CellError(token, NEGATIVE)
    return value


def threshold_fraction(threshold):
    """The fraction of the expected bandwidth a run must reach: a number in (0, 1]; ValueError otherwise."""
    try:
        fraction = float(threshold)
    except (TypeError, ValueError):
        fraction = None
    if fraction is None or not 0 < fraction <= 1:
        raise ValueError('threshold must be a number in (0, 1], got %r' % (threshold,))
    return fraction


def judged_row(parsed, message_size, size_key):
    """The row a verdict judges: the one for ``message_size`` when given (the last, if repeated), else the parser's
    largest-message row (the plateau of a sweep). ``size_key`` names the row's size in bytes."""
    rows = parsed.get('rows') or []
    if not rows:
        raise ValueError('the parsed run has no result rows to evaluate')
    if message_size is None:
        return parsed.get('largest_message_row') or max(rows, key=lambda item: item[size_key])
    size = int(message_size)
    matching = [row for row in rows if row[size_key] == size]
    if not matching:
        raise ValueError('no result row for message size %d (sizes: %s)'
                         % (size, ', '.join(str(row[size_key]) for row in rows)))
    return matching[-1]
