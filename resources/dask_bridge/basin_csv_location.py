"""Where a CSV value is in its file, as the local reader says it (native/src/io/csv.cc):
the physical line of the field and its byte column, both from 1. pandas only knows a
value's data row; an error naming file:line:column lets the user find it as they would
locally. Used on the error path alone: lines without a quote are counted, not scanned.
"""

QUOTE = ord('"')


def locate(path, delimiter, header, row, field, blank_is_row=False):
    """(line, column) of field `field` (0-based, in file order) of data row `row`
    (0-based; blank lines are not rows unless `blank_is_row`: a file of one column), or
    None if not found."""
    sep = delimiter.encode("utf-8")
    if len(sep) != 1:
        return None
    sep = sep[0]
    target = row + (1 if header else 0)  # records before it, the header included
    record, in_quotes, fld, line_no = 0, False, 0, 0
    with open(path, "rb") as f:
        for raw in f:
            line_no += 1
            if not in_quotes:
                if raw.strip(b"\r\n") == b"" and not (blank_is_row and record > 0):
                    continue  # a blank line is no record (nor, ever, before the first)
                fld = 0
                if record < target and QUOTE not in raw:
                    record += 1
                    continue
                if record == target and field == 0:
                    return line_no, 1
            for pos, byte in enumerate(raw):
                if byte == QUOTE:
                    in_quotes = not in_quotes  # a doubled quote toggles twice
                elif byte == sep and not in_quotes:
                    fld += 1
                    if record == target and fld == field:
                        return line_no, pos + 2
            if not in_quotes:
                if record == target:
                    return None
                record += 1
    return None


def where(path, delimiter, header, row, field, blank_is_row=False):
    """'path:line:column' of the value, or 'path: data row N' where it cannot be placed."""
    try:
        at = locate(path, delimiter, header, row, field, blank_is_row)
    except OSError:
        at = None
    return f"{path}:{at[0]}:{at[1]}" if at else f"{path}: data row {row + 1}"
