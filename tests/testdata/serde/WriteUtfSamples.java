// Writes writeutf.bin: for each case in writeutf-cases.txt (one line of
// space-separated hex UTF-16 code units), the bytes of
// DataOutputStream.writeUTF(string). Strings over 65535 encoded bytes are
// written as an i32 -1 marker after checking that the JDK throws.
//
//   java WriteUtfSamples.java writeutf-cases.txt writeutf.bin
import java.io.*;
import java.nio.file.*;
import java.util.*;

public class WriteUtfSamples {
  public static void main(String[] args) throws Exception {
    List<String> lines = Files.readAllLines(Paths.get(args[0]));
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(args[1]))) {
      for (String line : lines) {
        if (line.isBlank() || line.startsWith("#")) continue;
        String s = decode(line.trim());
        try {
          ByteArrayOutputStream b = new ByteArrayOutputStream();
          new DataOutputStream(b).writeUTF(s);
          out.write(b.toByteArray());
        } catch (UTFDataFormatException e) {
          out.writeShort(0xFFFF);
          out.writeInt(-1);
        }
      }
    }
  }

  static String decode(String line) {
    String[] parts = line.split(" ");
    if (parts[0].startsWith("repeat:")) {  // repeat:<count> <units...>
      int n = Integer.parseInt(parts[0].substring(7));
      String unit = decode(String.join(" ", Arrays.copyOfRange(parts, 1, parts.length)));
      return unit.repeat(n);
    }
    StringBuilder sb = new StringBuilder();
    for (String p : parts) sb.append((char) Integer.parseInt(p, 16));
    return sb.toString();
  }
}
