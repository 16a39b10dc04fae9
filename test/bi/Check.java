import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Reads every table of a SQLite mirror through the xerial sqlite-jdbc driver the way Metabase and
 * DBeaver do, with the driver's default settings: DatabaseMetaData.getColumns must give a declared
 * type for every column, and every non-null value must parse with the getter its declared type
 * calls for (DATETIME: getTimestamp, DATE: getDate, BOOLEAN: getBoolean, REAL/NUMERIC:
 * getBigDecimal). DATE columns hold plain 'yyyy-MM-dd' text, which xerial's getDate parses only
 * with date_string_format=yyyy-MM-dd (its pattern is connection-wide, and the default one is the
 * DATETIME form): they are read again on a second connection so configured, and the number of
 * values the default pattern refused is printed ("date-default-failures"). Run: java -cp /usr/share/java/sqlite-jdbc.jar test/bi/Check.java mirror.sqlite
 * Prints one summary line per type and, for the test to compare, "probe <table>.<column>
 * <epoch ms>" for the first DATETIME value of each table; exits 1 on any failure.
 */
public class Check {
  static int dateDefaultFailures = 0;

  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.setProperty("open_mode", "1"); // SQLITE_OPEN_READONLY, as docs/bi.md tells DBeaver users
    List<String> failures = new ArrayList<>();
    Map<String, List<String>> dateColumns = new LinkedHashMap<>();
    Map<String, Integer> parsed = new LinkedHashMap<>();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + args[0], props)) {
      DatabaseMetaData meta = c.getMetaData();
      List<String> tables = new ArrayList<>();
      try (ResultSet t = meta.getTables(null, null, "%", new String[] {"TABLE"})) {
        while (t.next()) {
          String name = t.getString("TABLE_NAME");
          if (!name.startsWith("sqlite_") && !name.startsWith("kysely_")) tables.add(name);
        }
      }
      for (String table : tables) {
        Map<String, String> types = new LinkedHashMap<>();
        try (ResultSet col = meta.getColumns(null, null, table, "%")) {
          while (col.next()) {
            String type = col.getString("TYPE_NAME");
            String name = col.getString("COLUMN_NAME");
            if (type == null || type.isEmpty()) failures.add(table + "." + name + ": no declared type");
            types.put(name, type == null ? "" : type.toUpperCase());
          }
        }
        boolean probed = false;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM \"" + table + "\"")) {
          while (rs.next()) {
            for (Map.Entry<String, String> e : types.entrySet()) {
              String col = e.getKey();
              String type = e.getValue();
              String text = rs.getString(col);
              if (text == null) continue;
              try {
                switch (type) {
                  case "DATETIME":
                    long ms = rs.getTimestamp(col).getTime();
                    if (!probed) {
                      System.out.println("probe " + table + "." + col + " " + text + " " + ms);
                      probed = true;
                    }
                    break;
                  case "DATE":
                    try {
                      rs.getDate(col).getTime();
                    } catch (Exception ex) {
                      // xerial parses text dates with one connection-wide pattern (date_string_format,
                      // default "yyyy-MM-dd HH:mm:ss.SSS"), which a plain date does not match; the
                      // second pass below reads DATE columns with the date-only pattern.
                      dateDefaultFailures++;
                    }
                    dateColumns.computeIfAbsent(table, k -> new ArrayList<>()).add(col);
                    break;
                  case "BOOLEAN":
                    if (!text.equals("0") && !text.equals("1")) throw new IllegalStateException("not 0/1: " + text);
                    rs.getBoolean(col);
                    break;
                  case "REAL":
                  case "NUMERIC":
                    BigDecimal b = rs.getBigDecimal(col);
                    if (b == null) throw new IllegalStateException("null BigDecimal for " + text);
                    break;
                  default:
                    continue;
                }
                parsed.merge(type, 1, Integer::sum);
              } catch (Exception ex) {
                if (failures.size() < 50) failures.add(table + "." + col + " (" + type + ") value '" + text + "': " + ex);
              }
            }
          }
        }
      }
    }
    Properties dateOnly = new Properties();
    dateOnly.setProperty("open_mode", "1");
    dateOnly.setProperty("date_string_format", "yyyy-MM-dd");
    dateOnly.setProperty("date_class", "TEXT");
    java.text.SimpleDateFormat utc = new java.text.SimpleDateFormat("yyyy-MM-dd");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + args[0], dateOnly)) {
      for (Map.Entry<String, List<String>> e : dateColumns.entrySet()) {
        for (String col : new java.util.LinkedHashSet<>(e.getValue())) {
          try (Statement s = c.createStatement();
               ResultSet rs = s.executeQuery("SELECT \"" + col + "\" FROM \"" + e.getKey() + "\" WHERE \"" + col + "\" IS NOT NULL")) {
            while (rs.next()) {
              String text = rs.getString(1);
              try {
                String back = utc.format(rs.getDate(1));
                if (!back.equals(text)) throw new IllegalStateException("read back as " + back);
                parsed.merge("DATE", 1, Integer::sum);
              } catch (Exception ex) {
                if (failures.size() < 50) failures.add(e.getKey() + "." + col + " (DATE) value '" + text + "': " + ex);
              }
            }
          }
        }
      }
    }
    customFields(args[0], props, failures);
    // The two read-only ways docs/bi.md gives DBeaver users must refuse writes.
    readOnly("open_mode=1", "jdbc:sqlite:" + args[0], props, failures);
    readOnly("mode=ro", "jdbc:sqlite:file:" + args[0] + "?mode=ro", new Properties(), failures);
    System.out.println("date-default-failures " + dateDefaultFailures);
    for (Map.Entry<String, Integer> e : parsed.entrySet()) System.out.println("parsed " + e.getKey() + " " + e.getValue());
    for (String f : failures) System.out.println("FAIL " + f);
    System.exit(failures.isEmpty() ? 0 : 1);
  }

  /**
   * Each custom field column of rpt_ticket_custom_fields as a BI tool types it: "customfield
   * <column> <declared type> <java.sql.Types code> <class of the value its type's getter returns>"
   * (DATE: getString, the DATE pass above parses it).
   */
  static void customFields(String db, Properties props, List<String> failures) {
    Map<String, String> seen = new LinkedHashMap<>();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db, props);
         Statement s = c.createStatement();
         ResultSet rs = s.executeQuery("SELECT * FROM rpt_ticket_custom_fields")) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        for (int i = 1; i <= md.getColumnCount(); i++) {
          String col = md.getColumnName(i);
          if (seen.containsKey(col) || rs.getString(i) == null) continue;
          String type = md.getColumnTypeName(i).toUpperCase();
          Object typed;
          switch (type) {
            case "REAL": typed = rs.getDouble(i); break;
            case "BOOLEAN": typed = rs.getBoolean(i); break;
            case "DATETIME": typed = rs.getTimestamp(i); break;
            default: typed = rs.getString(i);
          }
          seen.put(col, type + " " + md.getColumnType(i) + " " + typed.getClass().getName());
        }
      }
    } catch (Exception ex) {
      failures.add("rpt_ticket_custom_fields: " + ex);
    }
    for (Map.Entry<String, String> e : seen.entrySet()) System.out.println("customfield " + e.getKey() + " " + e.getValue());
  }

  static void readOnly(String how, String url, Properties props, List<String> failures) {
    try (Connection c = DriverManager.getConnection(url, props); Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT count(*) FROM tickets")) {
        rs.next();
      }
      try {
        s.executeUpdate("CREATE TABLE wsmirror_probe (a)");
        failures.add("read-only " + how + ": a write succeeded");
      } catch (Exception expected) {
        System.out.println("readonly " + how + " refused write");
      }
    } catch (Exception ex) {
      failures.add("read-only " + how + ": " + ex);
    }
  }
}
