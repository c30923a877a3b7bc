"""What a user sees: the flow's record and comment, mitmweb views, the console, captures and their replay."""
