package flinkstate.conformance;

import java.io.File;
import java.util.ArrayList;
import java.util.List;

/** MANIFEST.json / MANIFEST.txt: one row per kept file (release, job, backend, kind, checkpoint id, path). */
final class Manifest {
    final File root;
    final List<String[]> rows = new ArrayList<>();
    static final String[] COLS = {"release", "case", "job", "backend", "kind", "checkpointId", "file", "facts"};

    Manifest(File root) {
        this.root = root;
    }

    String rel(File f) {
        String r = root.getAbsoluteFile().toPath().relativize(f.getAbsoluteFile().toPath()).toString();
        return r;
    }

    /** Adds a row; for _metadata and completedCheckpoint files also writes facts.json beside the file. */
    void add(String caseName, String job, String backend, String kind, File file) throws Exception {
        String id = "";
        String facts = "";
        if (kind.startsWith("checkpoint") || kind.startsWith("savepoint") || kind.equals("completedCheckpoint")) {
            Facts.Loaded l = Facts.load(file);
            id = String.valueOf(l.checkpointId);
            File fj = new File(file.getParentFile(), "facts.json");
            Main.writeString(fj, Facts.toJson(l) + "\n");
            facts = rel(fj);
        }
        rows.add(new String[] {Main.release(), caseName, job, backend, kind, id, rel(file), facts});
    }

    void write() throws Exception {
        StringBuilder txt = new StringBuilder(String.join("\t", COLS)).append('\n');
        StringBuilder js = new StringBuilder("[\n");
        for (int i = 0; i < rows.size(); i++) {
            String[] r = rows.get(i);
            txt.append(String.join("\t", r)).append('\n');
            js.append(i > 0 ? ",\n" : "").append(" {");
            for (int c = 0; c < COLS.length; c++) {
                js.append(c > 0 ? "," : "").append(Facts.q(COLS[c])).append(':').append(Facts.q(r[c]));
            }
            js.append('}');
        }
        js.append("\n]\n");
        Main.writeString(new File(root, "MANIFEST.txt"), txt.toString());
        Main.writeString(new File(root, "MANIFEST.json"), js.toString());
    }
}
