#!/usr/bin/env bash
# openapi-generator, java (its default library, okhttp-gson): generate the Maven project, add
# Workflow.java to it, compile with Maven (dependencies from Maven Central, cached in ~/.m2), run it.
# Arguments: the document, a working directory, the repository's root.
set -euo pipefail
document=$1 out=$2 root=$3
source "$root/scripts/clients/versions.sh"
java -jar "$openapi_generator_jar" generate -i "$document" -g java -o "$out" --group-id example \
  --artifact-id wo --api-package wo.api --model-package wo.model --invoker-package wo \
  > "$out.generate.log" 2>&1 || { cat "$out.generate.log"; exit 1; }
mkdir -p "$out/src/main/java/workflow"
cp "$root/scripts/clients/java-openapi-generator/Workflow.java" "$out/src/main/java/workflow/"
cd "$out"
mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=classpath.txt > mvn.log 2>&1 ||
  { cat mvn.log; exit 1; }
java -cp "target/classes:$(cat classpath.txt)" workflow.Workflow
