"""Shoe and shift reports from the journal (`tablectl report`): `collect` reads what happened,
`charts` draws the roads and charts, `render` writes the PDF or HTML."""
