package io.kvselect.core.config;

import java.util.List;
import java.util.Locale;

/**
 * How one knob's value is read and range-checked, from an environment string or a JSON value.
 * Every failure is a {@link ConfigException} whose message starts with the caller's label.
 * Stateless.
 */
enum KnobKind {
  /** overlap_score_credit: [0, 1], with Dynamo's migration hint above 1. */
  CREDIT,
  /** A weight in [0, 1]. */
  UNIT,
  NON_NEGATIVE,
  POSITIVE,
  /** Nullable (unset) or >= 0. */
  OPTIONAL_NON_NEGATIVE,
  /** Nullable (unset) or > 0. */
  OPTIONAL_POSITIVE,
  BOOLEAN,
  POSITIVE_INT,
  NON_NEGATIVE_INT,
  /** One of the knob's choices. */
  CHOICE,
  /** One of the knob's choices, or null / "none" for unset. */
  OPTIONAL_CHOICE,
  /** Any non-blank string, or null for unset. */
  OPTIONAL_STRING;

  private static final List<String> TRUTHY = List.of("1", "true", "yes", "on");
  private static final List<String> FALSY = List.of("0", "false", "no", "off");

  /**
   * Parses an environment value (already non-blank) and checks its range. Numbers use {@link
   * Double#parseDouble}, so {@code NaN} and {@code Infinity} parse and are then rejected by the
   * range check; choices are case-insensitive and returned in lower case.
   *
   * @throws ConfigException starting with {@code label}
   */
  Object fromText(String label, String text, List<String> choices) {
    String t = text.trim();
    switch (this) {
      case BOOLEAN:
        return parseBoolean(label, t);
      case POSITIVE_INT:
      case NON_NEGATIVE_INT:
        try {
          return check(label, Integer.parseInt(t), choices);
        } catch (NumberFormatException e) {
          throw new ConfigException(label + " must be an integer, got '" + t + "'");
        }
      case CHOICE:
      case OPTIONAL_CHOICE:
      case OPTIONAL_STRING:
        return check(label, t, choices);
      default:
        try {
          return check(label, Double.parseDouble(t), choices);
        } catch (NumberFormatException e) {
          throw new ConfigException(label + " must be a number, got '" + t + "'");
        }
    }
  }

  /**
   * Converts a value decoded from JSON (Number, Boolean, String or null) and checks its range.
   * Types are strict: a quoted number or boolean is an error, and null is accepted only by the
   * optional kinds, where it means "unset".
   *
   * @throws ConfigException starting with {@code label}
   */
  Object fromJson(String label, Object value, List<String> choices) {
    if (value == null) {
      if (this == OPTIONAL_NON_NEGATIVE
          || this == OPTIONAL_POSITIVE
          || this == OPTIONAL_CHOICE
          || this == OPTIONAL_STRING) {
        return null;
      }
    }
    switch (this) {
      case BOOLEAN:
        if (value instanceof Boolean b) {
          return b;
        }
        throw new ConfigException(label + " must be a boolean");
      case POSITIVE_INT:
      case NON_NEGATIVE_INT:
        if (value instanceof Integer || value instanceof Long || value instanceof Short) {
          long v = ((Number) value).longValue();
          if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) {
            return check(label, (int) v, choices);
          }
        }
        throw new ConfigException(label + " must be an integer");
      case CHOICE:
      case OPTIONAL_CHOICE:
      case OPTIONAL_STRING:
        if (value instanceof String s) {
          return check(label, s.trim(), choices);
        }
        throw new ConfigException(label + " must be a string");
      default:
        if (value instanceof Number n) {
          return check(label, n.doubleValue(), choices);
        }
        throw new ConfigException(label + " must be a number");
    }
  }

  private Object check(String label, Object value, List<String> choices) {
    switch (this) {
      case CREDIT:
        {
          double v = (Double) value;
          if (!(v >= 0.0 && v <= 1.0)) {
            throw new ConfigException(
                label
                    + " must be in [0, 1], got "
                    + v
                    + (v > 1.0
                        ? "; overlap_score_weight was renamed to prefill_load_scale: keep the"
                            + " credit <= 1 and put larger values in prefill_load_scale"
                        : ""));
          }
          return v;
        }
      case UNIT:
        {
          double v = (Double) value;
          if (!(v >= 0.0 && v <= 1.0)) {
            throw new ConfigException(label + " must be in [0, 1], got " + v);
          }
          return v;
        }
      case NON_NEGATIVE:
      case OPTIONAL_NON_NEGATIVE:
        {
          double v = (Double) value;
          if (!(v >= 0.0) || Double.isInfinite(v)) {
            throw new ConfigException(label + " must be a finite number >= 0, got " + v);
          }
          return v;
        }
      case POSITIVE:
      case OPTIONAL_POSITIVE:
        {
          double v = (Double) value;
          if (!(v > 0.0) || Double.isInfinite(v)) {
            throw new ConfigException(label + " must be a finite number > 0, got " + v);
          }
          return v;
        }
      case POSITIVE_INT:
      case NON_NEGATIVE_INT:
        {
          int v = (Integer) value;
          int min = this == POSITIVE_INT ? 1 : 0;
          if (v < min) {
            throw new ConfigException(label + " must be an integer >= " + min + ", got " + v);
          }
          return v;
        }
      case CHOICE:
      case OPTIONAL_CHOICE:
        {
          String v = ((String) value).toLowerCase(Locale.ROOT);
          if (this == OPTIONAL_CHOICE && (v.isEmpty() || v.equals("none"))) {
            return null;
          }
          if (!choices.contains(v)) {
            throw new ConfigException(
                label
                    + " must be one of "
                    + String.join(", ", choices)
                    + (this == OPTIONAL_CHOICE ? ", none" : "")
                    + ", got '"
                    + value
                    + "'");
          }
          return v;
        }
      case OPTIONAL_STRING:
        {
          String v = (String) value;
          if (v.isEmpty()) {
            throw new ConfigException(label + " must not be empty");
          }
          return v;
        }
      default:
        return value;
    }
  }

  /** Dynamo's truthy parser, strict: anything but the listed words is an error. */
  static boolean parseBoolean(String label, String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (TRUTHY.contains(t)) {
      return true;
    }
    if (FALSY.contains(t)) {
      return false;
    }
    throw new ConfigException(
        label + " must be a boolean (1/0, true/false, yes/no, on/off), got '" + text + "'");
  }
}
