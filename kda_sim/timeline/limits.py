"""What a launch of ours can hold, in a module that imports nothing: the timeline
schema bounds its JSON with it, and the trace readers' caps (imported by every command's
flags) refuse a larger launch before building it, without paying for the schema."""

MAX_CTAS = 65536  # CTAs a launch of ours can have (from_chrome's bound too)
